/// `GET /api/v2/{serviceProvider}/configuration`: the requestor and its MVPDs.
public struct V2Configuration: Sendable, Hashable {
    /// One MVPD of the requestor.
    public struct MVPD: Sendable, Hashable {
        /// The MVPD id (`mvpd` in other paths).
        public var id: String
        /// The name shown in the picker.
        public var displayName: String
        /// The logo, if any.
        public var logoURL: String?
        /// A TempPass pseudo-MVPD.
        public var isTempPass: Bool
        /// Signs in one requestor at a time (no single sign-on).
        public var authPerAggregator: Bool
        /// Passive authentication is enabled.
        public var passiveAuthnEnabled: Bool
        /// The MVPD can be picked in the platform's TV-provider picker.
        public var enablePlatformServices: Bool
        /// The MVPD is shown in the platform picker.
        public var displayInPlatformPicker: Bool

        /// Creates an MVPD entry.
        public init(
            id: String, displayName: String, logoURL: String? = nil, isTempPass: Bool = false, authPerAggregator: Bool = false,
            passiveAuthnEnabled: Bool = false, enablePlatformServices: Bool = false, displayInPlatformPicker: Bool = false
        ) {
            self.id = id
            self.displayName = displayName
            self.logoURL = logoURL
            self.isTempPass = isTempPass
            self.authPerAggregator = authPerAggregator
            self.passiveAuthnEnabled = passiveAuthnEnabled
            self.enablePlatformServices = enablePlatformServices
            self.displayInPlatformPicker = displayInPlatformPicker
        }
    }

    /// One domain of the requestor.
    public struct Domain: Sendable, Hashable {
        /// The domain name.
        public var name: String
        /// Whether MVPD-initiated logins are allowed from it.
        public var mvpdInitiated: Bool

        /// Creates a domain.
        public init(name: String, mvpdInitiated: Bool) {
            self.name = name
            self.mvpdInitiated = mvpdInitiated
        }
    }

    /// The requestor's id.
    public var requestorID: String
    /// The requestor's name.
    public var requestorName: String
    /// Its domains.
    public var domains: [Domain]
    /// Its MVPDs, in the order to show them.
    public var mvpds: [MVPD]
    /// The device type Adobe classified the caller as, if given.
    public var device: String?
    /// The client type, if given.
    public var clientType: String?

    /// Creates a configuration.
    public init(
        requestorID: String, requestorName: String, domains: [Domain] = [], mvpds: [MVPD], device: String? = nil,
        clientType: String? = nil
    ) {
        self.requestorID = requestorID
        self.requestorName = requestorName
        self.domains = domains
        self.mvpds = mvpds
        self.device = device
        self.clientType = clientType
    }

    /// Reads a configuration answer.
    public init(json: JSONValue) throws(V2DecodingError) {
        let top = try V2Object(json)
        let requestor = try top.object("requestor")
        var mvpds: [MVPD] = []
        for item in try requestor.objects("mvpds") {
            mvpds.append(
                MVPD(
                    id: try item.string("id"), displayName: try item.string("displayName"), logoURL: try item.optionalString("logoUrl"),
                    isTempPass: try item.optionalBool("isTempPass") ?? false,
                    authPerAggregator: try item.optionalBool("authPerAggregator") ?? false,
                    passiveAuthnEnabled: try item.optionalBool("passiveAuthnEnabled") ?? false,
                    enablePlatformServices: try item.optionalBool("enablePlatformServices") ?? false,
                    displayInPlatformPicker: try item.optionalBool("displayInPlatformPicker") ?? false))
        }
        var domains: [Domain] = []
        if requestor.members["domains"] != nil {
            for item in try requestor.objects("domains") {
                domains.append(Domain(name: try item.string("name"), mvpdInitiated: try item.optionalBool("mvpdInitiated") ?? false))
            }
        }
        self.init(
            requestorID: try requestor.string("id"), requestorName: try requestor.optionalString("name") ?? "", domains: domains,
            mvpds: mvpds, device: try top.optionalString("device"), clientType: try top.optionalString("clientType"))
    }

    /// The configuration as V2 writes it (the fields the engine reads).
    public var json: JSONValue {
        let mvpds: [JSONValue] = mvpds.map { mvpd in
            var members: [String: JSONValue] = ["id": .string(mvpd.id), "displayName": .string(mvpd.displayName)]
            members.set("logoUrl", mvpd.logoURL.map(JSONValue.string))
            if mvpd.isTempPass { members["isTempPass"] = true }
            if mvpd.authPerAggregator { members["authPerAggregator"] = true }
            if mvpd.passiveAuthnEnabled { members["passiveAuthnEnabled"] = true }
            if mvpd.enablePlatformServices { members["enablePlatformServices"] = true }
            if mvpd.displayInPlatformPicker { members["displayInPlatformPicker"] = true }
            return .object(members)
        }
        let domains: [JSONValue] = domains.map { ["name": .string($0.name), "mvpdInitiated": .bool($0.mvpdInitiated)] }
        var top: [String: JSONValue] = [
            "requestor": ["id": .string(requestorID), "name": .string(requestorName), "domains": .array(domains), "mvpds": .array(mvpds)]
        ]
        top.set("device", device.map(JSONValue.string))
        top.set("clientType", clientType.map(JSONValue.string))
        return .object(top)
    }
}
