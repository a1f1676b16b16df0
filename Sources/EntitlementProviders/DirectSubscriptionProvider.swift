import EntitlementEngine
import EntitlementHTTP
import EntitlementSupport

/// A direct subscription on Pugpig's Security API (`KGPugpigAuthorisation`): the user signs in with
/// what they typed (the `signIn` call) and gets a user token; the engine keeps the token, never the
/// credentials. Verify Subscription (at every `setRequestor`, and every ``verificationInterval``)
/// says which resources the user may access and a message for the user; Edition Credentials gives a
/// resource's credentials — as an HTTP `Authorization: Basic …` value — which the engine keeps for good,
/// so a lapsed subscriber keeps what was granted. When the service calls the token invalid, the
/// engine renews it with Renew Token when the service has one (``Endpoints/renewToken``), else signs the
/// user out locally. Sign Out is best effort.
///
/// Answers are XML in the specification's shape: `<token>…</token>`, `<error status="…" message="…"/>`,
/// `<subscription state="active|lapsed" message="…"><issue id="…"/>…</subscription>`,
/// `<credentials><userid>…</userid><password>…</password></credentials>`. Requests are POSTs with a form
/// (Pugpig recommends POST: credentials must not land in server logs) unless `usesPOST` is off.
public final class DirectSubscriptionProvider: EntitlementProvider {
    /// The service's five endpoints; `renewToken` and `signOut` are optional.
    public struct Endpoints: Sendable, Hashable {
        /// Sign In.
        public var signIn: String
        /// Verify Subscription.
        public var verifySubscription: String
        /// Edition Credentials.
        public var editionCredentials: String
        /// Renew Token (nil: the service cannot renew; an invalid token signs the user out).
        public var renewToken: String?
        /// Sign Out (nil: nothing is sent on sign-out).
        public var signOut: String?

        /// Endpoints given one by one.
        public init(signIn: String, verifySubscription: String, editionCredentials: String, renewToken: String?, signOut: String?) {
            self.signIn = signIn
            self.verifySubscription = verifySubscription
            self.editionCredentials = editionCredentials
            self.renewToken = renewToken
            self.signOut = signOut
        }

        /// Pugpig's layout under one base: `ENDPOINT/sign_in/`, `ENDPOINT/verify_subscription/`,
        /// `ENDPOINT/edition_credentials/`, `ENDPOINT/renew_token/` (when `renews`), `ENDPOINT/sign_out/`.
        public init(base: String, renews: Bool = true) {
            let base = base.hasSuffix("/") ? String(base.dropLast()) : base
            self.init(
                signIn: base + "/sign_in/", verifySubscription: base + "/verify_subscription/",
                editionCredentials: base + "/edition_credentials/", renewToken: renews ? base + "/renew_token/" : nil,
                signOut: base + "/sign_out/")
        }
    }

    /// The provider's id in the chain.
    public let id: String
    /// Where the service answers.
    package let endpoints: Endpoints
    /// Whether requests are POSTs (default) or GETs with a query.
    package let usesPOST: Bool
    /// How often the engine verifies the subscription again while configured (nil: only at `setRequestor`).
    public let verificationInterval: Duration?
    /// Sees every request last; may add or change headers.
    package let decorate: (@Sendable (inout V2OutgoingRequest) async -> Void)?
    private let transport: any ProviderTransport

    /// A provider on `endpoints`.
    public init(
        id: String = "subscription", endpoints: Endpoints, usesPOST: Bool = true, verificationInterval: Duration? = nil,
        transport: any ProviderTransport = HTTPProviderTransport(),
        decorate: (@Sendable (inout V2OutgoingRequest) async -> Void)? = nil
    ) {
        self.id = id
        self.endpoints = endpoints
        self.usesPOST = usesPOST
        self.verificationInterval = verificationInterval
        self.transport = transport
        self.decorate = decorate
    }

    /// The user signs in.
    public var signsIn: Bool { true }
    /// When the service has Renew Token.
    public var renewsTokens: Bool { endpoints.renewToken != nil }

    // MARK: - The five calls

    /// Sign In with what the user typed: the user token, or the service's refusal (the same for active
    /// and lapsed users, as the specification requires).
    public func signIn(with credentials: [String: String], _ session: ProviderSession) async -> Result<String, ProviderFailure> {
        var fields = credentials.sorted { $0.key < $1.key }.map { ($0.key, $0.value) }
        fields.append(("device", session.deviceID))
        return await exchange(endpoints.signIn, fields).flatMap(Self.token)
    }

    /// Verify Subscription: the resources the user may access and the message for the user.
    public func verify(_ session: ProviderSession) async -> Result<ProviderView, ProviderFailure> {
        guard let token = session.userToken else { return .failure(.invalidToken) }
        return await exchange(endpoints.verifySubscription, [("token", token)]).flatMap { root in
            guard root.name == "subscription" else { return .failure(Self.failure(root)) }
            let issues = root.children.filter { $0.name == "issue" }.compactMap { $0.attributes["id"] }
            return .success(ProviderView(resources: Set(issues), message: root.attributes["message"]))
        }
    }

    /// Edition Credentials for `resource`, as a Basic `Authorization` value kept for good.
    public func credentials(for resource: String, _ session: ProviderSession) async -> Result<ProviderCredentials, ProviderFailure> {
        guard let token = session.userToken else { return .failure(.invalidToken) }
        return await exchange(endpoints.editionCredentials, [("token", token), ("product_id", resource)]).flatMap { root in
            guard root.name == "credentials", let user = root.child("userid")?.text, let password = root.child("password")?.text,
                !user.isEmpty
            else { return .failure(Self.failure(root)) }
            return .success(ProviderCredentials(token: "Basic " + Base64.encode(Array("\(user):\(password)".utf8)), keep: true))
        }
    }

    /// Renew Token: a new user token for the invalid one.
    public func renew(_ session: ProviderSession) async -> Result<String, ProviderFailure> {
        guard let endpoint = endpoints.renewToken, let token = session.userToken else { return .failure(.invalidToken) }
        return await exchange(endpoint, [("token", token)]).flatMap(Self.token).mapError { _ in .invalidToken }
    }

    /// Sign Out, best effort.
    public func signOut(_ session: ProviderSession) async {
        guard let endpoint = endpoints.signOut, let token = session.userToken else { return }
        _ = await exchange(endpoint, [("token", token)])
    }

    // MARK: - Exchanging

    private func exchange(_ endpoint: String, _ fields: [(String, String)]) async -> Result<SecurityAPIXML.Element, ProviderFailure> {
        let form = FormCoding.encode(fields)
        var request =
            usesPOST
            ? V2OutgoingRequest(
                operation: "securityAPI", method: "POST", url: endpoint,
                headers: ["Content-Type": "application/x-www-form-urlencoded", "Accept": "application/xml"], body: Array(form.utf8))
            : V2OutgoingRequest(
                operation: "securityAPI", method: "GET", url: endpoint + (endpoint.contains("?") ? "&" : "?") + form,
                headers: ["Accept": "application/xml"], body: [])
        if let decorate { await decorate(&request) }
        return await transport.send(request).flatMap { answer in
            guard answer.status == 200 else { return .failure(.unknown("the subscription service answered HTTP \(answer.status)")) }
            do throws(SecurityAPIXML.Failure) {
                return .success(try SecurityAPIXML.parse(answer.body))
            } catch {
                return .failure(.unknown("the subscription service's answer is not its XML (\(error.description))"))
            }
        }
    }

    private static func token(_ root: SecurityAPIXML.Element) -> Result<String, ProviderFailure> {
        guard root.name == "token", !root.text.isEmpty else { return .failure(failure(root)) }
        return .success(root.text)
    }

    /// What an `<error status="…" message="…"/>` (or any other unexpected answer) means.
    static func failure(_ root: SecurityAPIXML.Element) -> ProviderFailure {
        guard root.name == "error" else { return .unknown("unexpected <\(root.name)> from the subscription service") }
        let message = String((root.attributes["message"] ?? "").prefix(300))
        switch root.attributes["status"] {
        case "invalidtoken"?, "expiredtoken"?: return .invalidToken
        case "lapsed"?, "subscriptionexpired"?: return .subscriptionExpired
        case "notrecognised"?, "notentitled"?:
            return .denied(message.isEmpty ? "The subscription service refused." : message)
        case "unavailable"?: return .unavailable
        default: return .unknown(message.isEmpty ? "the subscription service refused" : message)
        }
    }
}
