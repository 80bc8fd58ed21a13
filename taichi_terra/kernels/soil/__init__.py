"""Deformable soil: the pressure-sinkage and shear laws of a quadrature point, and the soil history."""
