"""Shared by every subsystem: small vector and quaternion math, the packed-array layout."""
