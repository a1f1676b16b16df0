/// What one provider says the user may access: the resources it claims, and a message for the user
/// ("You are a Gold subscriber until 3 March"), from its last verification.
public struct ProviderView: Sendable, Hashable {
    /// The resources the provider claims for this user.
    public var resources: Set<String>
    /// What the provider would tell the user, if anything.
    public var message: String?

    /// Creates a view.
    public init(resources: Set<String>, message: String? = nil) {
        self.resources = resources
        self.message = message
    }

    /// A provider that grants nothing (not signed in, or lapsed with nothing kept).
    public static let nothing = ProviderView(resources: [])

    /// Whether the provider claims `resource`.
    public func claims(_ resource: String) -> Bool { resources.contains(resource) }
}
