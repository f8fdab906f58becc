"""The torch modules under test: ``operators/`` (one per operator configuration) and ``models/`` (reference networks)."""
