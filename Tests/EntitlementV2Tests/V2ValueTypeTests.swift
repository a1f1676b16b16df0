import EntitlementV2
import EntitlementTestSupport
import Testing

/// The REST API V2 value types read the examples and field lists of Adobe's API pages, write back the same
/// fields, ignore fields they do not know, and refuse a missing or mistyped required field with its path.
@Suite("REST API V2 value types")
struct V2ValueTypeTests {
    static func json(_ text: String) throws -> JSONValue { try JSONReader.read(text) }

    /// Decoding then encoding gives back every field the input had (and nothing else).
    static func expectRoundTrip(_ text: String, _ encoded: JSONValue, sourceLocation: SourceLocation = #_sourceLocation) throws {
        #expect(encoded == (try json(text)), "\(encoded.canonicalText)", sourceLocation: sourceLocation)
    }

    @Test func aDecisionPermitWithItsMediaToken() throws {
        let text = """
            {"decisions":[{"resource":"REF30","serviceProvider":"REF30","mvpd":"Cablevision","source":"mvpd","authorized":true,
            "token":{"notBefore":1697094207324,"notAfter":1697094802367,"serializedToken":"PHNpZ25hdHVyZUluZm8..."},
            "notBefore":1697094207324,"notAfter":1697098802367}]}
            """
        let decisions = try V2Decision.decisions(json: try Self.json(text))
        expectEqual(decisions.count, 1)
        #expect(decisions[0].authorized && decisions[0].source == .mvpd)
        expectEqual(decisions[0].token?.serialized, "PHNpZ25hdHVyZUluZm8...")
        expectEqual(decisions[0].token?.notAfter, Timestamp(milliseconds: 1_697_094_802_367))
        try Self.expectRoundTrip(text, V2Decision.json(decisions: decisions))
    }

    @Test func aDenialIsAnItemWithAnEnhancedError() throws {
        let text = """
            {"decisions":[{"resource":"sports-live","serviceProvider":"REF30","mvpd":"Cablevision","source":"mvpd","authorized":false,
            "error":{"status":403,"code":"authorization_denied_by_mvpd","message":"The MVPD has returned a Deny decision.",
            "details":"Your package does not include Sports Live.","helpUrl":"https://experienceleague.adobe.com/","trace":"8bcb17f9","action":"none"}}]}
            """
        let decision = try #require(try V2Decision.decisions(json: try Self.json(text)).first)
        #expect(!decision.authorized && decision.token == nil)
        #expect(decision.error?.code == "authorization_denied_by_mvpd" && decision.error?.status == 403)
        #expect(decision.error?.details == "Your package does not include Sports Live." && decision.error?.action == V2EnhancedError.Action.none)
        try Self.expectRoundTrip(text, V2Decision.json(decisions: [decision]))
    }

    @Test func enhancedErrorActionsIncludingUnknownOnes() throws {
        for (raw, action) in [
            ("authentication", V2EnhancedError.Action.authentication), ("retry", .retry), ("application-registration", .applicationRegistration),
            ("configuration", .configuration), ("authorization", .authorization), ("none", .none), ("reboot", .other("reboot")),
        ] {
            let error = try V2EnhancedError(json: try Self.json(#"{"status":403,"code":"c","message":"m","action":"\#(raw)"}"#))
            expectEqual(error.action, action)
            expectEqual(error.json["action"]?.string, raw)
        }
        // No action means none.
        try expectEqual(V2EnhancedError(json: try Self.json(#"{"status":500,"code":"internal_server_error","message":"m"}"#)).action, .none)
    }

    @Test func aProfileMapWithPlainAndEncryptedAttributes() throws {
        let text = """
            {"profiles":{"Cablevision":{"notBefore":1752149281000,"notAfter":1783685280000,"issuer":"Cablevision","type":"regular",
            "attributes":{"userID":{"value":"u-1","state":"plain"},"zip":{"value":["10001","10002"],"state":"enc"},
            "maxRating":{"value":{"MPAA":"R"},"state":"plain"}}}}}
            """
        let profiles = try V2Profile.profiles(json: try Self.json(text))
        let profile = try #require(profiles["Cablevision"])
        #expect(profile.kind == .regular && profile.issuer == "Cablevision")
        expectEqual(profile.attributes["userID"], V2Profile.Attribute(value: "u-1"))
        #expect(profile.attributes["zip"]?.encrypted == true && profile.attributes["zip"]?.value == ["10001", "10002"])
        try Self.expectRoundTrip(text, V2Profile.json(profiles: profiles))
        #expect(try V2Profile.profiles(json: try Self.json(#"{"profiles":{}}"#)).isEmpty, "no valid profile is an empty map")
    }

    @Test func sessionsSendTheirTimesAsStrings() throws {
        let text = """
            {"actionName":"authenticate","actionType":"interactive","reasonType":"none","url":"/api/v2/authenticate/REF30/8ER640M",
            "code":"8ER640M","sessionId":"1b614390-6610-4d14-9421-6565f6e75958","mvpd":"Cablevision","serviceProvider":"REF30",
            "notBefore":"1733735289035","notAfter":"1733737089035"}
            """
        let session = try V2Session(json: try Self.json(text))
        #expect(session.actionName == .authenticate && session.actionType == .interactive && session.reasonType == .none)
        expectEqual(session.code, "8ER640M")
        expectEqual(session.notAfter.map { $0.milliseconds(since: session.notBefore!) }, 1_800_000, "a 30-minute window")
        try Self.expectRoundTrip(text, session.json)
        let resume = """
            {"actionName":"resume","actionType":"direct","reasonType":"none","missingParameters":["redirectUrl","domainName"],
            "url":"/api/v2/REF30/sessions/8ER640M","code":"8ER640M","sessionId":"s","serviceProvider":"REF30"}
            """
        try expectEqual(V2Session(json: try Self.json(resume)).missingParameters, ["redirectUrl", "domainName"])
        // A number where V2 sends a string is a malformed answer.
        #expect(throws: V2DecodingError(path: "$.notAfter", reason: "not a string")) {
            try V2Session(json: try Self.json(#"{"actionName":"authorize","actionType":"direct","reasonType":"temporary","sessionId":"s","serviceProvider":"REF30","notAfter":1733737089035}"#))
        }
    }

    @Test func logoutActions() throws {
        let text = """
            {"logouts":{"Cablevision":{"actionName":"logout","actionType":"interactive","mvpd":"Cablevision",
            "url":"https://sp.auth.adobe.com/adobe-services/logout?requestor_id=REF30"},
            "TempPass":{"actionName":"complete","actionType":"none","mvpd":"TempPass"}}}
            """
        let logouts = try V2Logout.logouts(json: try Self.json(text))
        #expect(logouts["Cablevision"]?.actionName == .logout && logouts["Cablevision"]?.url != nil)
        expectEqual(logouts["TempPass"], V2Logout(actionName: .complete, actionType: .none, mvpd: "TempPass"))
        try Self.expectRoundTrip(text, V2Logout.json(logouts: logouts))
    }

    @Test func configurationWithItsMVPDs() throws {
        let text = """
            {"device":"unknown","clientType":"html5","requestor":{"id":"REF30","name":"Reference","domains":[{"name":"adobe.com","mvpdInitiated":true}],
            "mvpds":[{"id":"Cablevision","displayName":"Optimum","logoUrl":"https://x/logo.png","enablePlatformServices":true,"displayInPlatformPicker":true},
            {"id":"TempPass","displayName":"TempPass","isTempPass":true}]}}
            """
        let configuration = try V2Configuration(json: try Self.json(text))
        #expect(configuration.requestorID == "REF30" && configuration.mvpds.map(\.id) == ["Cablevision", "TempPass"])
        #expect(configuration.mvpds[1].isTempPass && configuration.mvpds[0].enablePlatformServices)
        try Self.expectRoundTrip(text, configuration.json)
    }

    @Test func clientRegistrationAndAccessToken() throws {
        let registration = """
            {"client_id":"Bqrzzssmfhs","client_secret":"secret-1","client_id_issued_at":1723227212,
            "redirect_uris":["adobepass://ios.app"],"grant_types":["client_credentials"],"scopes":["api:client:v2"]}
            """
        let credentials = try V2ClientCredentials(json: try Self.json(registration))
        #expect(credentials.clientID == "Bqrzzssmfhs" && credentials.issuedAtSeconds == 1_723_227_212)
        try Self.expectRoundTrip(registration, credentials.json)
        let tokenText = #"{"id":"t-1","access_token":"eyJ.x.y","created_at":1723227212000,"expires_in":21600,"token_type":"bearer"}"#
        let token = try V2AccessToken(json: try Self.json(tokenText))
        expectEqual(token.expires, Timestamp(milliseconds: 1_723_227_212_000 + 21_600_000))
        try Self.expectRoundTrip(tokenText, token.json)
    }

    @Test func unknownFieldsAreIgnoredAndMissingOnesNamed() throws {
        let extra = #"{"status":400,"code":"invalid_parameter_code","message":"m","action":"none","futureField":{"a":[1,2]}}"#
        try expectEqual(V2EnhancedError(json: try Self.json(extra)).code, "invalid_parameter_code")
        #expect(throws: V2DecodingError(path: "$.decisions[0].mvpd", reason: "missing")) {
            try V2Decision.decisions(json: try Self.json(#"{"decisions":[{"resource":"r","serviceProvider":"s","authorized":true,"source":"mvpd"}]}"#))
        }
        let decisions = try V2Decision.decisions(json: try Self.json(#"{"decisions":[{"resource":"r","serviceProvider":"s","mvpd":"m","authorized":true,"source":"magic"}]}"#))
        expectEqual(decisions.first?.source, .other("magic"), "a value Adobe adds is kept, not refused")
        let profiles = try V2Profile.profiles(json: try Self.json(#"{"profiles":{"m":{"notBefore":1,"notAfter":2,"issuer":"m","type":"regular","attributes":{"zip":{"value":"1","state":"rot13"}}}}}"#))
        expectEqual(profiles["m"]?.attributes["zip"]?.encrypted, true, "an unknown state is read as encrypted")
        #expect(throws: V2DecodingError(path: "$", reason: "not an object")) { try V2Session(json: try Self.json("[1]")) }
    }
}
