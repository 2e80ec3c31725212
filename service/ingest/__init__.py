"""The edge: Kubernetes JSON/YAML bodies → the engine's normalized model."""
