"""`kreassign status`: a live cluster's reassignments read through Kafka's Admin client and explained by the
model of the cluster's release (docs/status.md)."""
