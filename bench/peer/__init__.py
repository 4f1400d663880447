"""OpenViking 0.5.2 beside this service in the same run (``make bench-peer``)."""
