"""The MCP front: Hindsight's MCP tools, each governed as its HTTP twin (``server.py``)."""
