/// How inputs, callbacks and backend requests are written in a trace, and how inputs are read
/// back for replay. Secrets go through a ``SecretBook`` on the way in.
enum TraceCoding {
    // MARK: - Inputs

    static func encode(_ input: Input, at now: Timestamp, seq: Int, book: inout SecretBook) -> JSONValue {
        var record: [String: JSONValue] = ["seq": .int(Int64(seq)), "t": .int(now.milliseconds)]
        switch input {
        case .callReceived(let id, let call):
            record["in"] = "call"
            record["id"] = .int(Int64(truncatingIfNeeded: id.rawValue))
            record.merge(encode(call, book: &book)) { $1 }
        case .optionsChanged(let options):
            record["in"] = "options"
            record["options"] = .object(options.mapValues(JSONValue.string))
        case .configurationLoaded(let operation, let configuration, let stored, let others):
            record["in"] = "configurationLoaded"
            record["op"] = .int(Int64(truncatingIfNeeded: operation.rawValue))
            record["configuration"] = encode(configuration)
            record["stored"] = encode(stored, book: &book)
            // Written only when another requestor stored something, so single-app traces read as before.
            if !others.isEmpty { record["others"] = .array(others.map { encode($0, book: &book) }) }
        case .configurationFailed(let operation, let error):
            record["in"] = "configurationFailed"
            record["op"] = .int(Int64(truncatingIfNeeded: operation.rawValue))
            record["error"] = encode(error)
        case .flowSecretsDrawn(let flow, let secrets):
            record["in"] = "secretsDrawn"
            record["flow"] = .int(Int64(truncatingIfNeeded: flow.rawValue))
            record["state"] = .string(book.conceal(secrets.state, as: .state))
            record["verifier"] = secrets.verifier.map { .string(book.conceal($0, as: .verifier)) } ?? .null
        case .backendAnswered(let operation, let response):
            record["in"] = "backendAnswered"
            record["op"] = .int(Int64(truncatingIfNeeded: operation.rawValue))
            record["response"] = encode(response, book: &book)
        case .backendFailed(let operation, let error):
            record["in"] = "backendFailed"
            record["op"] = .int(Int64(truncatingIfNeeded: operation.rawValue))
            record["error"] = encode(error)
        case .storageChanged(let stored):
            record["in"] = "storageChanged"
            record["stored"] = encode(stored, book: &book)
        case .storageWriteFailed(let reason):
            record["in"] = "storageWriteFailed"
            record["reason"] = .string(reason)
        case .timerFired(let timer):
            record["in"] = "timerFired"
            record["timer"] = .string(timer.name)
            record["flow"] = .int(Int64(truncatingIfNeeded: timer.flow.rawValue))
        case .platformPickerAnswered(let flow, let answer):
            record["in"] = "platformPickerAnswered"
            record["flow"] = .int(Int64(truncatingIfNeeded: flow.rawValue))
            record["answer"] = encode(answer, book: &book)
        case .platformSignInChecked(let operation, let assertion):
            record["in"] = "platformSignInChecked"
            record["op"] = .int(Int64(truncatingIfNeeded: operation.rawValue))
            record["assertion"] = assertion.map { encode($0, book: &book) } ?? .null
        }
        return .object(record)
    }

    static func decodeInput(_ record: JSONValue) throws(TraceError.Reason) -> (Input, Timestamp) {
        let time = Timestamp(milliseconds: try int(record, "t"))
        let kind = try string(record, "in")
        let input: Input
        switch kind {
        case "call":
            input = .callReceived(CallID(try identifier(record, "id")), try decodeCall(record))
        case "options":
            input = .optionsChanged(try stringMap(record, "options"))
        case "configurationLoaded":
            guard let others = (record["others"] ?? .array([])).array else { throw .field("others") }
            input = .configurationLoaded(
                try operation(record), try decodeConfiguration(try member(record, "configuration")),
                try decodeStored(try member(record, "stored")),
                others: try others.map { item throws(TraceError.Reason) in try decodeAuthentication(item) })
        case "configurationFailed":
            input = .configurationFailed(try operation(record), try decodeError(try member(record, "error")))
        case "secretsDrawn":
            let verifier = try member(record, "verifier")
            input = .flowSecretsDrawn(
                FlowID(try identifier(record, "flow")),
                FlowSecrets(state: try string(record, "state"), verifier: verifier == .null ? nil : verifier.string))
        case "backendAnswered":
            input = .backendAnswered(try operation(record), try decodeResponse(try member(record, "response")))
        case "backendFailed":
            input = .backendFailed(try operation(record), try decodeError(try member(record, "error")))
        case "storageChanged":
            input = .storageChanged(try decodeStored(try member(record, "stored")))
        case "storageWriteFailed":
            input = .storageWriteFailed(try string(record, "reason"))
        case "timerFired":
            let flow = FlowID(try identifier(record, "flow"))
            switch try string(record, "timer") {
            case "redirectDeadline": input = .timerFired(.redirectDeadline(flow))
            case "registrationPoll": input = .timerFired(.registrationPoll(flow))
            case "registrationExpiry": input = .timerFired(.registrationExpiry(flow))
            default: throw .field("timer")
            }
        case "platformPickerAnswered":
            input = .platformPickerAnswered(
                FlowID(try identifier(record, "flow")), try decodePickerAnswer(try member(record, "answer")))
        case "platformSignInChecked":
            let assertion = try member(record, "assertion")
            input = .platformSignInChecked(try operation(record), assertion == .null ? nil : try decodeAssertion(assertion))
        default:
            throw .field("in")
        }
        return (input, time)
    }

    // MARK: - Platform picker

    private static func encode(_ answer: PlatformPickerAnswer, book: inout SecretBook) -> JSONValue {
        switch answer {
        case .signedIn(let assertion): ["signedIn": encode(assertion, book: &book)]
        case .otherProviders: ["otherProviders": true]
        case .unsupportedProvider(let mvpd): ["unsupportedProvider": .string(mvpd)]
        case .cancelled: ["cancelled": true]
        }
    }

    private static func decodePickerAnswer(_ value: JSONValue) throws(TraceError.Reason) -> PlatformPickerAnswer {
        guard let members = value.object, members.count == 1, let (kind, body) = members.first else { throw .field("answer") }
        switch kind {
        case "signedIn": return .signedIn(try decodeAssertion(body))
        case "otherProviders": return .otherProviders
        case "unsupportedProvider":
            guard let mvpd = body.string else { throw .field("unsupportedProvider") }
            return .unsupportedProvider(mvpd)
        case "cancelled": return .cancelled
        default: throw .field("answer")
        }
    }

    private static func encode(_ assertion: PlatformAssertion, book: inout SecretBook) -> JSONValue {
        ["mvpd": .string(assertion.mvpdID), "serialized": .string(book.conceal(assertion.serialized, as: .assertion))]
    }

    private static func decodeAssertion(_ value: JSONValue) throws(TraceError.Reason) -> PlatformAssertion {
        PlatformAssertion(mvpdID: try string(value, "mvpd"), serialized: try string(value, "serialized"))
    }

    // MARK: - Calls

    private static func encode(_ call: EntitlementCall, book: inout SecretBook) -> [String: JSONValue] {
        var fields: [String: JSONValue] = ["call": .string(call.name)]
        switch call {
        case .setRequestor(let requestor, let providers):
            fields["requestor"] = .string(requestor)
            fields["serviceProviders"] = .array(providers.map(JSONValue.string))
        case .checkAuthentication, .getSelectedProvider, .logout:
            break
        case .getAuthentication(let force, let data):
            fields["forceAuthn"] = .bool(force)
            fields["data"] = .object(data.mapValues(JSONValue.string))
        case .setSelectedProvider(let mvpd):
            fields["mvpd"] = mvpd.map(JSONValue.string) ?? .null
        case .handleExternalURL(let url):
            // An over-long URL is refused for its length alone: keep just enough of it to be refused alike.
            let kept = url.utf8.count > ExternalURL.maximumLength
                ? String(decoding: url.utf8.prefix(ExternalURL.maximumLength + 16), as: UTF8.self) : url
            fields["url"] = .string(book.concealURL(kept))
        case .checkAuthorization(let resource, let data), .getAuthorization(let resource, let data):
            fields["resource"] = .string(resource)
            fields["data"] = .object(data.mapValues(JSONValue.string))
        case .checkPreauthorizedResources(let resources, let cache):
            fields["resources"] = .array(resources.map(JSONValue.string))
            fields["cache"] = .bool(cache)
        case .getMetadata(let key):
            fields["key"] = encode(key)
        }
        return fields
    }

    private static func decodeCall(_ record: JSONValue) throws(TraceError.Reason) -> EntitlementCall {
        switch try string(record, "call") {
        case "setRequestor":
            return .setRequestor(requestorID: try string(record, "requestor"), serviceProviders: try strings(record, "serviceProviders"))
        case "checkAuthentication": return .checkAuthentication
        case "getSelectedProvider": return .getSelectedProvider
        case "logout": return .logout
        case "getAuthentication":
            return .getAuthentication(forceAuthn: try bool(record, "forceAuthn"), data: try stringMap(record, "data"))
        case "setSelectedProvider":
            let mvpd = try member(record, "mvpd")
            return .setSelectedProvider(mvpd == .null ? nil : try string(record, "mvpd"))
        case "handleExternalURL":
            return .handleExternalURL(SecretBook.encodePlaceholders(inURL: try string(record, "url")))
        case "checkAuthorization":
            return .checkAuthorization(resource: try string(record, "resource"), data: try stringMap(record, "data"))
        case "getAuthorization":
            return .getAuthorization(resource: try string(record, "resource"), data: try stringMap(record, "data"))
        case "checkPreauthorizedResources":
            return .checkPreauthorizedResources(try strings(record, "resources"), cache: try bool(record, "cache"))
        case "getMetadata": return .getMetadata(try decodeKey(try member(record, "key")))
        default: throw .field("call")
        }
    }

    private static func encode(_ key: MetadataKey) -> JSONValue {
        switch key {
        case .authenticationExpiry: ["key": "TTL_AUTHN"]
        case .authorizationExpiry(let resource): ["key": "TTL_AUTHZ", "resource": .string(resource)]
        case .deviceID: ["key": "DEVICEID"]
        case .userMetadata(let name): ["key": "USER_META", "name": .string(name)]
        }
    }

    private static func decodeKey(_ value: JSONValue) throws(TraceError.Reason) -> MetadataKey {
        switch try string(value, "key") {
        case "TTL_AUTHN": return .authenticationExpiry
        case "TTL_AUTHZ": return .authorizationExpiry(resource: try string(value, "resource"))
        case "DEVICEID": return .deviceID
        case "USER_META": return .userMetadata(try string(value, "name"))
        default: throw .field("key")
        }
    }

    // MARK: - Callbacks

    static func encode(_ callback: Callback, answering: [CallID], seq: Int, book: inout SecretBook) -> JSONValue {
        var record: [String: JSONValue] = [
            "seq": .int(Int64(seq)), "out": "callback", "callback": .string(callback.name),
            "answers": .array(answering.map { .int(Int64(truncatingIfNeeded: $0.rawValue)) }),
        ]
        switch callback {
        case .setRequestorComplete(let success): record["success"] = .bool(success)
        case .displayProviderDialog(let mvpds): record["mvpds"] = .array(mvpds.map(encode))
        case .setAuthenticationStatus(let status, let code):
            record["status"] = .int(Int64(status))
            record["errorCode"] = .string(code)
        case .navigateToUrl(let url): record["url"] = .string(book.concealURL(url))
        case .sendTrackingData(let event, let data):
            record["event"] = .string(event.rawValue)
            record["data"] = .array(data.map(JSONValue.string))
        case .setToken(let token, let resource):
            record["token"] = .string(book.conceal(token, as: .media))
            record["resource"] = .string(resource)
        case .tokenRequestFailed(let resource, let code, let description):
            record["resource"] = .string(resource)
            record["errorCode"] = .string(code)
            record["errorDescription"] = .string(description)
        case .selectedProvider(let mvpd): record["mvpd"] = mvpd.map(encode) ?? .null
        case .setMetadataStatus(let value, let encrypted, let key):
            record["metadata"] = value.map(encode) ?? .null
            record["encrypted"] = .bool(encrypted)
            record["key"] = encode(key)
        case .preauthorizedResources(let resources): record["resources"] = .array(resources.map(JSONValue.string))
        case .presentTvProviderDialog(let dialog), .dismissTvProviderDialog(let dialog):
            record["dialog"] = ["id": .string(dialog.id), "mvpds": .array(dialog.mvpds.map(encode))]
        case .status(let report):
            record["code"] = .string(report.code)
            record["level"] = .string(report.level.rawValue)
            // The registration code is the message of REGCODE: a secret like any code.
            record["message"] = .string(report.code == "REGCODE" ? book.conceal(report.message, as: .regcode) : report.message)
        }
        return .object(record)
    }

    // MARK: - Backend requests

    static func encode(_ operation: OperationID, _ request: BackendRequest, seq: Int, book: inout SecretBook) -> JSONValue {
        var record: [String: JSONValue] = [
            "seq": .int(Int64(seq)), "out": "request", "op": .int(Int64(truncatingIfNeeded: operation.rawValue)),
            "operation": .string(request.operation.rawValue),
        ]
        switch request {
        case .configuration(let requestor, let providers, let device, let options):
            record["context"] = encode(RequestContext(requestorID: requestor, deviceID: device, options: options))
            record["serviceProviders"] = .array(providers.map(JSONValue.string))
        case .exchangePlatformAssertion(let context, let assertion):
            record["context"] = encode(context)
            record["assertion"] = encode(assertion, book: &book)
        case .startTempPass(let context, let mvpd, let data):
            record["context"] = encode(context)
            record["mvpd"] = .string(mvpd)
            record["data"] = .object(data.mapValues(JSONValue.string))
        case .singleSignOn(let context, let authentication):
            record["context"] = encode(context)
            record["authentication"] = encode(authentication, book: &book)
        case .passiveAuthentication(let context, let mvpd):
            record["context"] = encode(context)
            record["mvpd"] = .string(mvpd)
        case .registrationCode(let context, let mvpd, let lifetime):
            record["context"] = encode(context)
            record["mvpd"] = .string(mvpd)
            record["lifetime"] = .int(lifetime.milliseconds)
        case .checkRegistration(let context, let code):
            record["context"] = encode(context)
            record["code"] = .string(book.conceal(code, as: .regcode))
        case .exchangeCode(let exchange):
            record["context"] = encode(exchange.context)
            record["mvpd"] = .string(exchange.mvpdID)
            record["code"] = .string(book.conceal(exchange.code, as: .code))
            record["codeVerifier"] = .string(book.conceal(exchange.codeVerifier, as: .verifier))
            record["redirectURL"] = .string(exchange.redirectURL)
            record["data"] = .object(exchange.data.mapValues(JSONValue.string))
        case .authorize(let context, let authentication, let resource, let data):
            record["context"] = encode(context)
            record["authentication"] = encode(authentication, book: &book)
            record["resource"] = .string(resource)
            record["data"] = .object(data.mapValues(JSONValue.string))
        case .mediaToken(let context, let authentication, let authorization):
            record["context"] = encode(context)
            record["authentication"] = encode(authentication, book: &book)
            record["authorization"] = encode(authorization, book: &book)
        case .preauthorize(let context, let authentication, let resources):
            record["context"] = encode(context)
            record["authentication"] = encode(authentication, book: &book)
            record["resources"] = .array(resources.map(JSONValue.string))
        case .userMetadata(let context, let authentication, let name):
            record["context"] = encode(context)
            record["authentication"] = encode(authentication, book: &book)
            record["name"] = .string(name)
        }
        return .object(record)
    }

    private static func encode(_ context: RequestContext) -> JSONValue {
        [
            "requestor": .string(context.requestorID), "device": .string(context.deviceID),
            "options": .object(context.options.mapValues(JSONValue.string)),
        ]
    }

    // MARK: - Backend answers

    private static func encode(_ response: BackendResponse, book: inout SecretBook) -> JSONValue {
        switch response {
        case .configuration(let configuration): ["configuration": encode(configuration)]
        case .authenticated(let token): ["authenticated": encode(token, book: &book)]
        case .authorized(let token): ["authorized": encode(token, book: &book)]
        case .mediaToken(let token):
            [
                "mediaToken": [
                    "serialized": .string(book.conceal(token.serialized, as: .media)), "resource": .string(token.resource),
                    "expires": .int(token.expires.milliseconds),
                ]
            ]
        case .preauthorized(let decisions):
            [
                "preauthorized": .array(
                    decisions.map {
                        ["resource": .string($0.resource), "authorized": .bool($0.authorized), "error": $0.error.map(JSONValue.string) ?? .null]
                    })
            ]
        case .userMetadata(let value, let encrypted):
            ["userMetadata": ["value": value.map(encode) ?? .null, "encrypted": .bool(encrypted)]]
        case .registrationCode(let code):
            [
                "registrationCode": [
                    "code": .string(book.conceal(code.code, as: .regcode)), "expires": .int(code.expires.milliseconds),
                ]
            ]
        case .registrationPending: ["registrationPending": true]
        }
    }

    private static func decodeResponse(_ value: JSONValue) throws(TraceError.Reason) -> BackendResponse {
        guard let members = value.object, members.count == 1, let (kind, body) = members.first else {
            throw .field("response")
        }
        switch kind {
        case "configuration": return .configuration(try decodeConfiguration(body))
        case "authenticated": return .authenticated(try decodeAuthentication(body))
        case "authorized": return .authorized(try decodeAuthorization(body))
        case "mediaToken":
            return .mediaToken(
                MediaToken(
                    serialized: try string(body, "serialized"), resource: try string(body, "resource"),
                    expires: Timestamp(milliseconds: try int(body, "expires"))))
        case "preauthorized":
            guard let items = body.array else { throw .field("preauthorized") }
            return .preauthorized(
                try items.map { item throws(TraceError.Reason) in
                    PreauthorizationDecision(
                        resource: try string(item, "resource"), authorized: try bool(item, "authorized"), error: item["error"]?.string)
                })
        case "registrationCode":
            return .registrationCode(
                RegistrationCode(code: try string(body, "code"), expires: Timestamp(milliseconds: try int(body, "expires"))))
        case "registrationPending": return .registrationPending
        case "userMetadata":
            let metadata = try member(body, "value")
            return .userMetadata(metadata == .null ? nil : try decodeMetadata(metadata), encrypted: try bool(body, "encrypted"))
        default: throw .field("response")
        }
    }

    private static func encode(_ error: BackendError) -> JSONValue {
        switch error {
        case .network(let why): ["network": .string(why)]
        case .timeout: ["timeout": true]
        case .httpStatus(let status, let why): ["httpStatus": ["status": .int(Int64(status)), "message": .string(why)]]
        case .throttled(let seconds): ["throttled": ["retryAfterSeconds": .int(Int64(seconds))]]
        case .malformedResponse(let why): ["malformedResponse": .string(why)]
        case .authenticationRequired(let why): ["authenticationRequired": .string(why)]
        case .denied(let code, let message): ["denied": ["code": .string(code), "message": .string(message)]]
        }
    }

    private static func decodeError(_ value: JSONValue) throws(TraceError.Reason) -> BackendError {
        guard let members = value.object, members.count == 1, let (kind, body) = members.first else {
            throw .field("error")
        }
        switch kind {
        case "network": return .network(body.string ?? "")
        case "timeout": return .timeout
        case "httpStatus": return .httpStatus(Int(try int(body, "status")), try string(body, "message"))
        case "throttled": return .throttled(retryAfterSeconds: Int(try int(body, "retryAfterSeconds")))
        case "malformedResponse": return .malformedResponse(body.string ?? "")
        case "authenticationRequired": return .authenticationRequired(body.string ?? "")
        case "denied": return .denied(code: try string(body, "code"), message: try string(body, "message"))
        default: throw .field("error")
        }
    }

    // MARK: - Configuration and tokens

    private static func encode(_ mvpd: MVPD) -> JSONValue {
        var members: [String: JSONValue] = [
            "id": .string(mvpd.id), "displayName": .string(mvpd.displayName), "logoURL": .string(mvpd.logoURL),
            "enablePlatformServices": .bool(mvpd.enablePlatformServices),
        ]
        // Flags written only when set, so traces of regular MVPDs read as before.
        if mvpd.isTempPass { members["isTempPass"] = true }
        if mvpd.authenticationPerRequestor { members["authenticationPerRequestor"] = true }
        return .object(members)
    }

    private static func decodeMVPD(_ value: JSONValue) throws(TraceError.Reason) -> MVPD {
        MVPD(
            id: try string(value, "id"), displayName: try string(value, "displayName"), logoURL: try string(value, "logoURL"),
            enablePlatformServices: try bool(value, "enablePlatformServices"), isTempPass: value["isTempPass"] == .bool(true),
            authenticationPerRequestor: value["authenticationPerRequestor"] == .bool(true))
    }

    private static func encode(_ configuration: RequestorConfiguration) -> JSONValue {
        [
            "requestor": .string(configuration.requestorID), "mvpds": .array(configuration.mvpds.map(encode)),
            "authenticationEndpoint": .string(configuration.authenticationEndpoint),
            "logoutEndpoint": .string(configuration.logoutEndpoint),
        ]
    }

    private static func decodeConfiguration(_ value: JSONValue) throws(TraceError.Reason) -> RequestorConfiguration {
        guard let mvpds = value["mvpds"]?.array else { throw .field("mvpds") }
        return RequestorConfiguration(
            requestorID: try string(value, "requestor"),
            mvpds: try mvpds.map { item throws(TraceError.Reason) in try decodeMVPD(item) },
            authenticationEndpoint: try string(value, "authenticationEndpoint"),
            logoutEndpoint: try string(value, "logoutEndpoint"))
    }

    private static func encode(_ token: AuthenticationToken, book: inout SecretBook) -> JSONValue {
        var members: [String: JSONValue] = [
            "value": .string(book.conceal(token.value, as: .authn)), "mvpd": .string(token.mvpdID),
            "requestor": .string(token.requestorID), "userID": .string(token.userID),
            "expires": .int(token.expires.milliseconds),
        ]
        // The source is written only when it is not an MVPD login, so those traces read as before.
        if token.source != .mvpdLogin { members["source"] = .string(token.source.rawValue) }
        return .object(members)
    }

    private static func decodeAuthentication(_ value: JSONValue) throws(TraceError.Reason) -> AuthenticationToken {
        AuthenticationToken(
            value: try string(value, "value"), mvpdID: try string(value, "mvpd"), requestorID: try string(value, "requestor"),
            userID: try string(value, "userID"), expires: Timestamp(milliseconds: try int(value, "expires")),
            source: try decodeSource(value["source"]))
    }

    private static func decodeSource(_ value: JSONValue?) throws(TraceError.Reason) -> AuthenticationSource {
        guard let value else { return .mvpdLogin }
        guard let raw = value.string, let source = AuthenticationSource(rawValue: raw) else { throw .field("source") }
        return source
    }

    private static func encode(_ token: AuthorizationToken, book: inout SecretBook) -> JSONValue {
        [
            "value": .string(book.conceal(token.value, as: .authz)), "resource": .string(token.resource),
            "expires": .int(token.expires.milliseconds),
        ]
    }

    private static func decodeAuthorization(_ value: JSONValue) throws(TraceError.Reason) -> AuthorizationToken {
        AuthorizationToken(
            value: try string(value, "value"), resource: try string(value, "resource"),
            expires: Timestamp(milliseconds: try int(value, "expires")))
    }

    private static func encode(_ stored: StoredTokens, book: inout SecretBook) -> JSONValue {
        var authorizations: [String: JSONValue] = [:]
        for (resource, token) in stored.authorizations { authorizations[resource] = encode(token, book: &book) }
        return [
            "authentication": stored.authentication.map { encode($0, book: &book) } ?? .null,
            "authorizations": .object(authorizations), "selectedProvider": stored.selectedProvider.map(JSONValue.string) ?? .null,
            "device": stored.deviceID.map(JSONValue.string) ?? .null,
            "pendingLogin": stored.pendingLogin.map { pending in
                [
                    "mvpd": .string(pending.mvpdID), "state": .string(book.conceal(pending.state, as: .state)),
                    "verifier": .string(book.conceal(pending.verifier, as: .verifier)),
                    "deadline": .int(pending.deadline.milliseconds), "data": .object(pending.data.mapValues(JSONValue.string)),
                ]
            } ?? .null,
        ]
    }

    private static func decodeStored(_ value: JSONValue) throws(TraceError.Reason) -> StoredTokens {
        let authentication = try member(value, "authentication")
        guard let authorizations = value["authorizations"]?.object else { throw .field("authorizations") }
        var decoded: [String: AuthorizationToken] = [:]
        for (resource, token) in authorizations { decoded[resource] = try decodeAuthorization(token) }
        let selected = try member(value, "selectedProvider")
        return StoredTokens(
            authentication: authentication == .null ? nil : try decodeAuthentication(authentication), authorizations: decoded,
            selectedProvider: selected == .null ? nil : try string(value, "selectedProvider"), deviceID: value["device"]?.string,
            pendingLogin: try decodePending(value["pendingLogin"] ?? .null))
    }

    private static func decodePending(_ value: JSONValue) throws(TraceError.Reason) -> PendingLogin? {
        guard value != .null else { return nil }
        return PendingLogin(
            mvpdID: try string(value, "mvpd"), state: try string(value, "state"), verifier: try string(value, "verifier"),
            deadline: Timestamp(milliseconds: try int(value, "deadline")), data: try stringMap(value, "data"))
    }

    private static func encode(_ value: MetadataValue) -> JSONValue {
        switch value {
        case .text(let text): .string(text)
        case .list(let items): .array(items.map(JSONValue.string))
        }
    }

    private static func decodeMetadata(_ value: JSONValue) throws(TraceError.Reason) -> MetadataValue {
        if let text = value.string { return .text(text) }
        if let items = value.array { return .list(items.compactMap(\.string)) }
        throw .field("metadata")
    }

    // MARK: - Field readers

    private static func member(_ value: JSONValue, _ key: String) throws(TraceError.Reason) -> JSONValue {
        guard let member = value[key] else { throw .field(key) }
        return member
    }

    private static func string(_ value: JSONValue, _ key: String) throws(TraceError.Reason) -> String {
        guard let text = value[key]?.string else { throw .field(key) }
        return text
    }

    private static func int(_ value: JSONValue, _ key: String) throws(TraceError.Reason) -> Int64 {
        guard let number = value[key]?.int else { throw .field(key) }
        return number
    }

    /// A call, flow or operation number: never negative.
    private static func identifier(_ value: JSONValue, _ key: String) throws(TraceError.Reason) -> UInt64 {
        let number = try int(value, key)
        guard number >= 0 else { throw .field(key) }
        return UInt64(number)
    }

    private static func bool(_ value: JSONValue, _ key: String) throws(TraceError.Reason) -> Bool {
        guard let flag = value[key]?.bool else { throw .field(key) }
        return flag
    }

    private static func strings(_ value: JSONValue, _ key: String) throws(TraceError.Reason) -> [String] {
        guard let items = value[key]?.array else { throw .field(key) }
        return try items.map { item throws(TraceError.Reason) in
            guard let text = item.string else { throw .field(key) }
            return text
        }
    }

    private static func stringMap(_ value: JSONValue, _ key: String) throws(TraceError.Reason) -> [String: String] {
        guard let members = value[key]?.object else { throw .field(key) }
        var out: [String: String] = [:]
        for (name, member) in members {
            guard let text = member.string else { throw .field(key) }
            out[name] = text
        }
        return out
    }

    private static func operation(_ value: JSONValue) throws(TraceError.Reason) -> OperationID {
        OperationID(try identifier(value, "op"))
    }
}
