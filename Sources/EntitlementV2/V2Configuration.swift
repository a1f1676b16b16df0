/// `GET /api/v2/{serviceProvider}/configuration`: the requestor and its MVPDs.
package struct V2Configuration: Sendable, Hashable {
    /// One MVPD of the requestor.
    package struct MVPD: Sendable, Hashable {
        /// The MVPD id (`mvpd` in other paths).
        package var id: String
        /// The name shown in the picker.
        package var displayName: String
        /// The logo, if any.
        package var logoURL: String?
        /// A TempPass pseudo-MVPD.
        package var isTempPass: Bool
        /// Signs in one requestor at a time (no single sign-on).
        package var authPerAggregator: Bool
        /// Passive authentication is enabled.
        package var passiveAuthnEnabled: Bool
        /// The MVPD can be picked in the platform's TV-provider picker.
        package var enablePlatformServices: Bool
        /// The MVPD is shown in the platform picker.
        package var displayInPlatformPicker: Bool

        /// Creates an MVPD entry.
        package init(
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
    package struct Domain: Sendable, Hashable {
        /// The domain name.
        package var name: String
        /// Whether MVPD-initiated logins are allowed from it.
        package var mvpdInitiated: Bool

        /// Creates a domain.
        package init(name: String, mvpdInitiated: Bool) {
            self.name = name
            self.mvpdInitiated = mvpdInitiated
        }
    }

    /// The requestor's id.
    package var requestorID: String
    /// The requestor's name.
    package var requestorName: String
    /// Its domains.
    package var domains: [Domain]
    /// Its MVPDs, in the order to show them.
    package var mvpds: [MVPD]
    /// The device type Adobe classified the caller as, if given.
    package var device: String?
    /// The client type, if given.
    package var clientType: String?

    /// Creates a configuration.
    package init(
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
    package init(json: JSONValue) throws(V2DecodingError) {
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
    package var json: JSONValue {
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
