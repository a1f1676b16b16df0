import EntitlementProviders

extension HTTPProviderTransport {
    /// A transport for tests against servers on loopback: their answers take milliseconds, but the
    /// whole suite starting at once on two cores holds every task back for 8–12 s (no test finishes
    /// before then), which is past the default 10 s timeout. A test of what a timeout does sets its own.
    static var patient: HTTPProviderTransport { HTTPProviderTransport(timeout: .seconds(60)) }
}
