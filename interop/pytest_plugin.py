"""pytest plugin of the interop suite (registered through the ``pytest11`` entry point)."""
