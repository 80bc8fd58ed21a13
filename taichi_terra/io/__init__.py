"""World files: XML import and export."""
from .xml import export_world_xml, load_world_xml

__all__ = ["load_world_xml", "export_world_xml"]
