/// The ordered providers that answer authorization (Pugpig's rule): for a resource, the first link
/// that claims it answers; when none does, the last link does (put the one with the best fallback
/// last — usually the TV provider, whose fallback is the login). The TV-provider path claims every
/// resource while the user is signed in with an MVPD; another provider claims what its last
/// ``ProviderView`` lists.
///
/// ```swift
/// let chain = try ProviderChain([.provider(storePurchases), .provider(subscription), .tvProvider])
/// let enabler = AccessEnabler(backend: backend, environment: .live(deviceID: id), providers: chain)
/// ```
public struct ProviderChain: Sendable {
    /// One link.
    public enum Link: Sendable {
        /// The TV-provider path (Adobe Pass through the engine's backend).
        case tvProvider
        /// Another provider.
        case provider(any EntitlementProvider)

        var id: String {
            switch self {
            case .tvProvider: ProviderLink.tvProviderID
            case .provider(let provider): provider.id
            }
        }
    }

    /// Why a chain was refused: a sentence naming the link. A struct, not an enum: a check added later
    /// breaks no caller's `switch`.
    public struct Refusal: Error, Sendable, Hashable, CustomStringConvertible {
        /// What is wrong with the links.
        public let message: String

        /// A chain needs at least one link.
        package static let empty = Refusal(message: "A provider chain needs at least one link.")

        /// Two links share this id (the TV provider's is `tv-provider`).
        package static func duplicateID(_ id: String) -> Refusal {
            Refusal(message: "Two links of the provider chain share the id '\(id)'.")
        }

        /// A provider's id is empty or longer than 64 characters (the first 64 are given).
        package static func invalidID(_ id: String) -> Refusal {
            Refusal(message: "A provider's id must have 1 to 64 characters: '\(id)' has \(id.count).")
        }

        /// The message.
        public var description: String { message }
    }

    /// The links, in order.
    public let links: [Link]

    /// Creates a chain; ids must be unique and non-empty.
    public init(_ links: [Link]) throws(Refusal) {
        guard !links.isEmpty else { throw .empty }
        var seen: Set<String> = []
        for link in links {
            guard !link.id.isEmpty, link.id.count <= 64 else { throw .invalidID(String(link.id.prefix(64))) }
            guard seen.insert(link.id).inserted else { throw .duplicateID(link.id) }
        }
        self.links = links
    }

    /// The links as the machine knows them.
    public var descriptions: [ProviderLink] {
        links.map { link in
            switch link {
            case .tvProvider: .tvProvider
            case .provider(let provider):
                ProviderLink(
                    id: provider.id, requestsOneAtATime: provider.requestsOneAtATime, signsIn: provider.signsIn,
                    renewsTokens: provider.renewsTokens, verificationInterval: provider.verificationInterval)
            }
        }
    }

    /// The provider with this id (nil for the TV provider and unknown ids).
    public func provider(_ id: String) -> (any EntitlementProvider)? {
        for case .provider(let provider) in links where provider.id == id { return provider }
        return nil
    }
}
