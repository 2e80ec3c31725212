"""The noderesources plugins: NodeResourcesFit and NodeResourcesBalancedAllocation, and the
resource scorers they share (upstream pkg/scheduler/framework/plugins/noderesources)."""
