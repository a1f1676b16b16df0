import EntitlementEngine

/// The direct subscription a check of ``FleetChecker/Bounds/subscription`` signs in to (a Security API:
/// it gives a token at sign-in, honours it for the issue until it forgets it or the user signs out, and
/// replaces a token it renews), and the promise it holds the fleet to: each token renewed once, whichever
/// nodes find it invalid.
extension FleetModel {
    /// What the subscription answers `node`'s `request`, made with `token`.
    mutating func subscriptionAnswer(_ request: ProviderRequest, token: String?, on node: Int) -> ProviderAnswer {
        let honoured = token.map { service.subscriptionValid.contains($0) } ?? false
        switch request {
        case .signIn:
            service.subscriptionIssued += 1
            let issued = "U\(service.subscriptionIssued)"
            service.subscriptionValid.insert(issued)
            return .signedIn(.success(issued))
        case .verify:
            return .verified(honoured ? .success(ProviderView(resources: [Self.issue])) : .failure(.invalidToken))
        case .credentials:
            return .credentials(honoured ? .success(ProviderCredentials(token: "grant-" + (token ?? ""))) : .failure(.invalidToken))
        case .renew:
            guard let token, token.hasPrefix("U"), !service.subscriptionSignedOut.contains(token) else { return .renewed(.failure(.invalidToken)) }
            if let earlier = service.subscriptionRenewed[token] {
                // A second renewal of a token whose first the store held (every node could know of it) is
                // the fleet renewing twice. One whose new token no save held was lost with that save: the
                // token is dead at the service either way, and asking again is all a node can do.
                if !lostWrite, service.subscriptionStored.contains(earlier) {
                    problems.append("node \(Self.name(node)) renewed token \(token) a second time (the store held its renewal, \(earlier)): one renewal for the fleet")
                }
                return .renewed(.failure(.invalidToken))
            }
            service.subscriptionValid.remove(token)
            service.subscriptionIssued += 1
            let renewed = "U\(service.subscriptionIssued)"
            service.subscriptionRenewed[token] = renewed
            service.subscriptionValid.insert(renewed)
            return .renewed(.success(renewed))
        case .signOut:
            if let token {
                service.subscriptionValid.remove(token)
                service.subscriptionSignedOut.insert(token)
            }
            return .signedOut
        }
    }
}
