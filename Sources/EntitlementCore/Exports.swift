// The machine's inputs and actions speak REST API V2's types: importing EntitlementCore imports them too.
@_exported import EntitlementV2
