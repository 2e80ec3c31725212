"""Dynamic resource allocation: the pieces of k8s.io/dynamic-resource-allocation the
scheduler's DynamicResources plugin uses (the CEL device selectors, the structured
allocator)."""
