import EntitlementEngine
/// How inputs, callbacks and backend requests are written in a trace, and how inputs are read
/// back for replay. Secrets go through a `SecretBook` on the way in.
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
        case .configurationLoaded(let operation, let configuration, let stored, let others, let verified):
            record["in"] = "configurationLoaded"
            record["op"] = .int(Int64(truncatingIfNeeded: operation.rawValue))
            record["configuration"] = encode(configuration)
            record["stored"] = encode(stored, book: &book)
            // Written only when another requestor stored something, so single-app traces read as before.
            if !others.isEmpty { record["others"] = .array(others.map { encode($0, book: &book) }) }
            // Likewise only with a provider chain.
            if !verified.isEmpty {
                var views: [String: JSONValue] = [:]
                for (provider, verification) in verified.sorted(by: { $0.key < $1.key }) { views[provider] = encode(verification, book: &book) }
                record["verified"] = .object(views)
            }
        case .providerAnswered(let operation, let answer):
            record["in"] = "providerAnswered"
            record["op"] = .int(Int64(truncatingIfNeeded: operation.rawValue))
            switch answer {
            case .credentials(.success(let credentials)):
                record["credentials"] = .string(book.conceal(credentials.token, as: .media))
                if credentials.keep { record["keep"] = true }
            case .verified(.success(let view)): record["verified"] = encode(.success(view), book: &book)
            case .signedIn(.success(let token)): record["signedIn"] = .string(book.conceal(token, as: .secret))
            case .renewed(.success(let token)): record["renewed"] = .string(book.conceal(token, as: .secret))
            case .credentials(.failure(let failure)): record["failure"] = encode(failure, book: &book)
            case .verified(.failure(let failure)): record["verifyFailure"] = encode(failure, book: &book)
            case .signedIn(.failure(let failure)): record["signInFailure"] = encode(failure, book: &book)
            case .renewed(.failure(let failure)): record["renewFailure"] = encode(failure, book: &book)
            case .signedOut: record["signedOut"] = true
            }
        case .configurationFailed(let operation, let error):
            record["in"] = "configurationFailed"
            record["op"] = .int(Int64(truncatingIfNeeded: operation.rawValue))
            record["error"] = encode(error)
        case .flowSecretsDrawn(let flow, let secrets):
            record["in"] = "secretsDrawn"
            record["flow"] = .int(Int64(truncatingIfNeeded: flow.rawValue))
            record["state"] = .string(book.conceal(secrets.state, as: .state))
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
        case .callNotSaved(let id, let call, let reason), .callNotRead(let id, let call, let reason):
            record.merge(encode(call, book: &book)) { $1 }
            record["in"] = .string(input.name)
            record["id"] = .int(Int64(truncatingIfNeeded: id.rawValue))
            record["reason"] = .string(reason)
        case .timerFired(let timer):
            record["in"] = "timerFired"
            record["timer"] = .string(timer.name)
            switch timer {
            case .retry(let operation): record["op"] = .int(Int64(truncatingIfNeeded: operation.rawValue))
            case .providerVerification(let provider): record["provider"] = .string(provider)
            case .stepUp(let operation): record["op"] = .int(Int64(truncatingIfNeeded: operation.rawValue))
            default: record["flow"] = .int(Int64(truncatingIfNeeded: (timer.flow ?? FlowID(0)).rawValue))
            }
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
            guard let verified = (record["verified"] ?? .object([:])).object else { throw .field("verified") }
            var views: [String: Result<ProviderView, ProviderFailure>] = [:]
            for (provider, value) in verified { views[provider] = try decodeVerification(value) }
            input = .configurationLoaded(
                try operation(record), try decodeConfiguration(try member(record, "configuration")),
                try decodeStored(try member(record, "stored")),
                others: try others.map { item throws(TraceError.Reason) in try decodeAuthentication(item) }, verified: views)
        case "providerAnswered":
            input = .providerAnswered(try operation(record), try decodeProviderAnswer(record))
        case "configurationFailed":
            input = .configurationFailed(try operation(record), try decodeError(try member(record, "error")))
        case "secretsDrawn":
            input = .flowSecretsDrawn(FlowID(try identifier(record, "flow")), FlowSecrets(state: try string(record, "state")))
        case "backendAnswered":
            input = .backendAnswered(try operation(record), try decodeResponse(try member(record, "response")))
        case "backendFailed":
            input = .backendFailed(try operation(record), try decodeError(try member(record, "error")))
        case "storageChanged":
            input = .storageChanged(try decodeStored(try member(record, "stored")))
        case "storageWriteFailed":
            input = .storageWriteFailed(try string(record, "reason"))
        case "callNotSaved":
            input = .callNotSaved(CallID(try identifier(record, "id")), try decodeCall(record), reason: try string(record, "reason"))
        case "callNotRead":
            input = .callNotRead(CallID(try identifier(record, "id")), try decodeCall(record), reason: try string(record, "reason"))
        case "timerFired" where record["timer"]?.string == "retry":
            input = .timerFired(.retry(try operation(record)))
        case "timerFired" where record["timer"]?.string == "stepUp":
            input = .timerFired(.stepUp(try operation(record)))
        case "timerFired" where record["timer"]?.string == "providerVerification":
            input = .timerFired(.providerVerification(try string(record, "provider")))
        case "timerFired":
            let flow = FlowID(try identifier(record, "flow"))
            switch try string(record, "timer") {
            case "redirectDeadline": input = .timerFired(.redirectDeadline(flow))
            case "registrationPoll": input = .timerFired(.registrationPoll(flow))
            case "registrationExpiry": input = .timerFired(.registrationExpiry(flow))
            case "profileRead": input = .timerFired(.profileRead(flow))
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

    // MARK: - Providers

    private static func encode(_ verification: Result<ProviderView, ProviderFailure>, book: inout SecretBook) -> JSONValue {
        switch verification {
        case .success(let view):
            var members: [String: JSONValue] = ["resources": .array(view.resources.sorted().map(JSONValue.string))]
            if let message = view.message { members["message"] = .string(message) }
            return .object(members)
        case .failure(let failure):
            return ["failure": encode(failure, book: &book)]
        }
    }

    private static func decodeVerification(_ value: JSONValue) throws(TraceError.Reason) -> Result<ProviderView, ProviderFailure> {
        if let failure = value["failure"] { return .failure(try decodeFailure(failure)) }
        return .success(ProviderView(resources: Set(try strings(value, "resources")), message: value["message"]?.string))
    }

    private static func encode(_ failure: ProviderFailure, book: inout SecretBook) -> JSONValue {
        switch failure.kind {
        case .stepUpRequired:
            guard let advice = failure.advice else { return "stepUpRequired" }
            return ["stepUpRequired": encode(advice, book: &book)]
        case .denied: return ["denied": .string(failure.detail ?? "")]
        case .unknown: return ["unknown": .string(failure.detail ?? "")]
        default: return .string(failure.kind.description)  // the kinds that carry nothing, by name
        }
    }

    private static func decodeProviderAnswer(_ record: JSONValue) throws(TraceError.Reason) -> ProviderAnswer {
        if let token = record["credentials"]?.string {
            return .credentials(.success(ProviderCredentials(token: token, keep: record["keep"] == .bool(true))))
        }
        if let failure = record["failure"] { return .credentials(.failure(try decodeFailure(failure))) }
        if let view = record["verified"] { return .verified(try decodeVerification(view)) }
        if let failure = record["verifyFailure"] { return .verified(.failure(try decodeFailure(failure))) }
        if let token = record["signedIn"]?.string { return .signedIn(.success(token)) }
        if let failure = record["signInFailure"] { return .signedIn(.failure(try decodeFailure(failure))) }
        if let token = record["renewed"]?.string { return .renewed(.success(token)) }
        if let failure = record["renewFailure"] { return .renewed(.failure(try decodeFailure(failure))) }
        if record["signedOut"] == .bool(true) { return .signedOut }
        throw .field("providerAnswered")
    }

    private static func encode(_ advice: StepUpAdvice, book: inout SecretBook) -> JSONValue {
        var members: [String: JSONValue] = ["kind": .string(advice.kind.rawValue), "value": .string(advice.value)]
        if let transaction = advice.transactionID { members["transaction"] = .string(book.conceal(transaction, as: .secret)) }
        return .object(members)
    }

    private static func decodeAdvice(_ value: JSONValue) throws(TraceError.Reason) -> StepUpAdvice {
        guard let kind = StepUpAdvice.Kind(rawValue: try string(value, "kind")) else { throw .field("advice") }
        return StepUpAdvice(kind: kind, value: try string(value, "value"), transactionID: value["transaction"]?.string)
    }

    private static func decodeFailure(_ value: JSONValue) throws(TraceError.Reason) -> ProviderFailure {
        switch value.string {
        case "networkFailure": return .networkFailure
        case "unavailable": return .unavailable
        case "subscriptionExpired": return .subscriptionExpired
        case "cancelledByUser": return .cancelledByUser
        case "invalidToken": return .invalidToken
        default:
            if let message = value["denied"]?.string { return .denied(message) }
            if let advice = value["stepUpRequired"] { return .stepUpRequired(try decodeAdvice(advice)) }
            guard let underlying = value["unknown"]?.string else { throw .field("failure") }
            return .unknown(underlying)
        }
    }

    /// A request to a provider of the chain, as an output record (what the user typed to sign in is
    /// never written: only the names of its fields).
    static func encodeProviderRequest(_ operation: OperationID, provider: String, _ request: ProviderRequest, seq: Int) -> JSONValue {
        var record: [String: JSONValue] = [
            "seq": .int(Int64(seq)), "out": "provider", "op": .int(Int64(truncatingIfNeeded: operation.rawValue)),
            "provider": .string(provider), "request": .string(request.name),
        ]
        switch request {
        case .credentials(let resource): record["resource"] = .string(resource)
        case .signIn(let fields): record["fields"] = .array(fields.keys.sorted().map(JSONValue.string))
        case .verify, .renew, .signOut: break
        }
        return .object(record)
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
        case .signIn(let provider, let credentials):
            fields["provider"] = .string(provider)
            // Concealed in key order, so the placeholders are numbered alike in every recording.
            var concealed: [String: JSONValue] = [:]
            for (key, value) in credentials.sorted(by: { $0.key < $1.key }) { concealed[key] = .string(book.conceal(value, as: .secret)) }
            fields["credentials"] = .object(concealed)
        case .signOut(let provider):
            fields["provider"] = .string(provider)
        case .completeStepUp(let resource, let succeeded):
            fields["resource"] = .string(resource)
            fields["succeeded"] = .bool(succeeded)
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
        case "signIn": return .signIn(provider: try string(record, "provider"), credentials: try stringMap(record, "credentials"))
        case "signOut": return .signOut(provider: try string(record, "provider"))
        case "completeStepUp": return .completeStepUp(resource: try string(record, "resource"), succeeded: try bool(record, "succeeded"))
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
        case .sendTrackingData(let event, var data):
            if let field = event.userGUIDField, data.indices.contains(field) { data[field] = book.concealPersonal(data[field]) }
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
            record["metadata"] = value.map { encode(concealing($0, of: key, book: &book)) } ?? .null
            record["encrypted"] = .bool(encrypted)
            record["key"] = encode(key)
        case .preauthorizedResources(let resources): record["resources"] = .array(resources.map(JSONValue.string))
        case .presentTvProviderDialog(let dialog), .dismissTvProviderDialog(let dialog):
            record["dialog"] = ["id": .string(dialog.id), "mvpds": .array(dialog.mvpds.map(encode))]
        case .status(let report):
            record["code"] = .string(report.code)
            record["level"] = .string(report.level.rawValue)
            // The registration code (the session's code) is the message of REGCODE: a secret like any code.
            record["message"] = .string(report.code == "REGCODE" ? book.conceal(report.message, as: .code) : report.message)
        case .entitlementsChanged(let providers): record["providers"] = .array(providers.map(JSONValue.string))
        case .providerSignInStatus(let provider, let signedIn, let code, let message):
            record["provider"] = .string(provider)
            record["signedIn"] = .bool(signedIn)
            record["errorCode"] = .string(code)
            record["message"] = .string(message)
        case .stepUpRequired(let resource, let advice):
            record["resource"] = .string(resource)
            record["advice"] = encode(advice, book: &book)
        }
        return .object(record)
    }

    // MARK: - Backend requests

    static func encode(_ operation: OperationID, _ request: BackendRequest, seq: Int, book: inout SecretBook) -> JSONValue {
        var record: [String: JSONValue] = [
            "seq": .int(Int64(seq)), "out": "request", "op": .int(Int64(truncatingIfNeeded: operation.rawValue)),
            "operation": .string(request.operation.rawValue),
        ]
        record["context"] = encode(request.context, book: &book)
        switch request {
        case .configuration, .profiles: break
        case .createSession(_, let mvpd, let domainName, let redirectURL):
            record["mvpd"] = .string(mvpd)
            record["domainName"] = domainName.map(JSONValue.string) ?? .null
            record["redirectURL"] = redirectURL.map { .string(book.concealURL($0)) } ?? .null
        case .resumeSession(_, let code, let mvpd, let domainName, let redirectURL):
            record["code"] = .string(book.conceal(code, as: .code))
            record["mvpd"] = .string(mvpd)
            record["domainName"] = domainName.map(JSONValue.string) ?? .null
            record["redirectURL"] = redirectURL.map { .string(book.concealURL($0)) } ?? .null
        case .session(_, let code):
            record["code"] = .string(book.conceal(code, as: .code))
        case .partnerSession(_, let partner, let domainName, let redirectURL):
            record["partner"] = .string(partner)
            record["domainName"] = domainName.map(JSONValue.string) ?? .null
            record["redirectURL"] = .string(book.concealURL(redirectURL))
        case .profile(_, let mvpd):
            record["mvpd"] = .string(mvpd)
        case .profileByCode(_, let code):
            record["code"] = .string(book.conceal(code, as: .code))
        case .partnerProfile(_, let partner, let assertion):
            record["partner"] = .string(partner)
            record["assertion"] = encode(assertion, book: &book)
        case .authorize(_, let mvpd, let resource):
            record["mvpd"] = .string(mvpd)
            record["resource"] = .string(resource)
        case .preauthorize(_, let mvpd, let resources):
            record["mvpd"] = .string(mvpd)
            record["resources"] = .array(resources.map(JSONValue.string))
        case .logout(_, let mvpd, let redirectURL):
            record["mvpd"] = .string(mvpd)
            record["redirectURL"] = .string(book.concealURL(redirectURL))
        }
        return .object(record)
    }

    private static func encode(_ context: RequestContext, book: inout SecretBook) -> JSONValue {
        [
            "requestor": .string(context.requestorID), "device": .string(book.concealPersonal(context.deviceID, as: .device)),
            "options": .object(context.options.mapValues(JSONValue.string)),
        ]
    }

    // MARK: - Backend answers

    /// REST API V2's own JSON for each answer — `{"profiles": …}`, `{"decisions": […]}` and
    /// `{"logouts": …}` as the service sends them; a configuration or a session under its name — with
    /// its secrets (session codes, login URLs, media tokens) concealed.
    private static func encode(_ response: BackendResponse, book: inout SecretBook) -> JSONValue {
        switch response {
        case .configuration(let configuration):
            return ["configuration": configuration.json]
        case .session(var session):
            session.code = session.code.map { book.conceal($0, as: .code) }
            session.sessionID = book.concealPersonal(session.sessionID)
            session.url = session.url.map { book.concealURL($0) }
            // The partner's request is what the platform's signed answer is bound to: kept out like one.
            if let request = session.authenticationRequest?.request {
                session.authenticationRequest?.request = book.conceal(request, as: .assertion)
            }
            return ["session": session.json]
        case .sessionStatus(var status):
            if let redirect = status.existingParameters["redirectUrl"] {
                status.existingParameters["redirectUrl"] = book.concealURL(redirect)
            }
            return ["sessionStatus": status.json]
        case .profiles(let profiles):
            // Concealed in MVPD and attribute order, so the placeholders are numbered alike in every recording.
            var concealed: [String: V2Profile] = [:]
            for (mvpd, var profile) in profiles.sorted(by: { $0.key < $1.key }) {
                for (name, attribute) in profile.attributes.sorted(by: { $0.key < $1.key }) {
                    profile.attributes[name]?.value = concealing(attribute.value, book: &book)
                }
                profile.sessionID = profile.sessionID.map { book.concealPersonal($0) }
                concealed[mvpd] = profile
            }
            return V2Profile.json(profiles: concealed)
        case .decisions(let decisions):
            let concealed = decisions.map { decision in
                var decision = decision
                if let serialized = decision.token?.serialized { decision.token?.serialized = book.conceal(serialized, as: .media) }
                return decision
            }
            return V2Decision.json(decisions: concealed)
        case .logouts(let logouts):
            let concealed = logouts.mapValues { logout in
                var logout = logout
                logout.url = logout.url.map { book.concealURL($0) }
                return logout
            }
            return V2Logout.json(logouts: concealed)
        }
    }

    private static func decodeResponse(_ value: JSONValue) throws(TraceError.Reason) -> BackendResponse {
        guard let members = value.object, members.count == 1, let (kind, body) = members.first else {
            throw .field("response")
        }
        do throws(V2DecodingError) {
            switch kind {
            case "configuration": return .configuration(try V2Configuration(json: body))
            case "session": return .session(try V2Session(json: body))
            case "sessionStatus": return .sessionStatus(try V2SessionStatus(json: body))
            case "profiles": return .profiles(try V2Profile.profiles(json: value))
            case "decisions": return .decisions(try V2Decision.decisions(json: value))
            case "logouts": return .logouts(try V2Logout.logouts(json: value))
            default: break
            }
        } catch {
            throw .field("response")
        }
        throw .field("response")
    }

    private static func encode(_ error: BackendError) -> JSONValue {
        switch error.code {
        case .timeout: ["timeout": true]
        case .httpStatus: ["httpStatus": ["status": .int(Int64(error.status ?? 0)), "message": .string(error.message)]]
        case .throttled: ["throttled": ["retryAfterSeconds": .int(Int64(error.retryAfterSeconds ?? 0))]]
        case .denied: ["denied": ["code": .string(error.denialCode ?? ""), "message": .string(error.message)]]
        default: [error.code.description: .string(error.message)]  // network, retryable, malformedResponse, …
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
        case "retryable": return .retryable(body.string ?? "")
        case "malformedResponse": return .malformedResponse(body.string ?? "")
        case "authenticationRequired": return .authenticationRequired(body.string ?? "")
        case "denied": return .denied(code: try string(body, "code"), message: try string(body, "message"))
        case "storageUnavailable": return .storageUnavailable(body.string ?? "")
        case "clientCredentials": return .clientCredentials(body.string ?? "")
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
        ["requestor": .string(configuration.requestorID), "mvpds": .array(configuration.mvpds.map(encode))]
    }

    private static func decodeConfiguration(_ value: JSONValue) throws(TraceError.Reason) -> RequestorConfiguration {
        guard let mvpds = value["mvpds"]?.array else { throw .field("mvpds") }
        return RequestorConfiguration(
            requestorID: try string(value, "requestor"),
            mvpds: try mvpds.map { item throws(TraceError.Reason) in try decodeMVPD(item) })
    }

    private static func encode(_ token: AuthenticationToken, book: inout SecretBook) -> JSONValue {
        var members: [String: JSONValue] = [
            "mvpd": .string(token.mvpdID), "requestor": .string(token.requestorID), "userID": .string(book.concealPersonal(token.userID)),
            "expires": .int(token.expires.milliseconds),
        ]
        // The source and metadata are written only when there are some.
        if token.source != .mvpdLogin { members["source"] = .string(token.source.rawValue) }
        if !token.metadata.isEmpty {
            // Concealed in name order, so the placeholders are numbered alike in every recording.
            var metadata: [String: JSONValue] = [:]
            for (name, value) in token.metadata.sorted(by: { $0.key < $1.key }) {
                metadata[name] = encode(concealing(value, of: .userMetadata(name), book: &book))
            }
            members["metadata"] = .object(metadata)
        }
        if let sessionID = token.sessionID { members["sessionID"] = .string(book.concealPersonal(sessionID)) }
        if !token.encryptedMetadata.isEmpty {
            members["encryptedMetadata"] = .array(token.encryptedMetadata.sorted().map(JSONValue.string))
        }
        return .object(members)
    }

    private static func decodeAuthentication(_ value: JSONValue) throws(TraceError.Reason) -> AuthenticationToken {
        var metadata: [String: MetadataValue] = [:]
        if let members = value["metadata"] {
            guard let object = members.object else { throw .field("metadata") }
            for (name, item) in object { metadata[name] = try decodeMetadata(item) }
        }
        return AuthenticationToken(
            mvpdID: try string(value, "mvpd"), requestorID: try string(value, "requestor"),
            userID: try string(value, "userID"), expires: Timestamp(milliseconds: try int(value, "expires")),
            source: try decodeSource(value["source"]), metadata: metadata,
            encryptedMetadata: Set(value["encryptedMetadata"] == nil ? [] : try strings(value, "encryptedMetadata")),
            sessionID: value["sessionID"]?.string)
    }

    private static func decodeSource(_ value: JSONValue?) throws(TraceError.Reason) -> AuthenticationSource {
        guard let value else { return .mvpdLogin }
        guard let raw = value.string, let source = AuthenticationSource(rawValue: raw) else { throw .field("source") }
        return source
    }

    private static func encode(_ stored: StoredTokens, book: inout SecretBook) -> JSONValue {
        var record: [String: JSONValue] = [
            "authentication": stored.authentication.map { encode($0, book: &book) } ?? .null,
            "selectedProvider": stored.selectedProvider.map(JSONValue.string) ?? .null,
            "device": stored.deviceID.map { .string(book.concealPersonal($0, as: .device)) } ?? .null,
            "pendingLogin": stored.pendingLogin.map { pending in
                var record: [String: JSONValue] = [
                    "mvpd": .string(pending.mvpdID), "state": .string(book.conceal(pending.state, as: .state)),
                    "code": .string(book.conceal(pending.code, as: .code)),
                    "deadline": .int(pending.deadline.milliseconds), "data": .object(pending.data.mapValues(JSONValue.string)),
                ]
                // Written only when known, so other traces read as before.
                if let url = pending.url { record["url"] = .string(book.concealURL(url)) }
                if pending.completing { record["completing"] = .bool(true) }
                return .object(record)
            } ?? .null,
        ]
        // Written only when there is one (or some), so other traces read as before.
        if let logout = stored.pendingLogout {
            record["pendingLogout"] = [
                "state": .string(book.conceal(logout.state, as: .state)), "deadline": .int(logout.deadline.milliseconds),
                "mvpd": logout.mvpdID.map(JSONValue.string) ?? .null,
            ]
        }
        if let registration = stored.pendingRegistration {
            record["pendingRegistration"] = [
                "mvpd": .string(registration.mvpdID), "code": .string(book.conceal(registration.code, as: .code)),
                "expires": .int(registration.expires.milliseconds),
            ]
        }
        guard !stored.providerAccounts.isEmpty else { return .object(record) }
        // Concealed in key order, so the placeholders are numbered alike in every recording.
        var accounts: [String: JSONValue] = [:]
        for (provider, account) in stored.providerAccounts.sorted(by: { $0.key < $1.key }) {
            var kept: [String: JSONValue] = [:]
            for (resource, credentials) in account.kept.sorted(by: { $0.key < $1.key }) {
                kept[resource] = .string(book.conceal(credentials, as: .media))
            }
            accounts[provider] = [
                "userToken": account.userToken.map { .string(book.conceal($0, as: .secret)) } ?? .null, "kept": .object(kept),
            ]
        }
        record["providerAccounts"] = .object(accounts)
        return .object(record)
    }

    private static func decodeStored(_ value: JSONValue) throws(TraceError.Reason) -> StoredTokens {
        let authentication = try member(value, "authentication")
        let selected = try member(value, "selectedProvider")
        var accounts: [String: ProviderAccount] = [:]
        for (provider, account) in value["providerAccounts"]?.object ?? [:] {
            let token = try member(account, "userToken")
            accounts[provider] = ProviderAccount(
                userToken: token == .null ? nil : try string(account, "userToken"), kept: try stringMap(account, "kept"))
        }
        return StoredTokens(
            authentication: authentication == .null ? nil : try decodeAuthentication(authentication),
            selectedProvider: selected == .null ? nil : try string(value, "selectedProvider"), deviceID: value["device"]?.string,
            pendingLogin: try decodePending(value["pendingLogin"] ?? .null),
            pendingLogout: try decodePendingLogout(value["pendingLogout"] ?? .null), providerAccounts: accounts,
            pendingRegistration: try decodePendingRegistration(value["pendingRegistration"] ?? .null))
    }

    private static func decodePendingRegistration(_ value: JSONValue) throws(TraceError.Reason) -> PendingRegistration? {
        guard value != .null else { return nil }
        return PendingRegistration(
            mvpdID: try string(value, "mvpd"), code: try string(value, "code"), expires: Timestamp(milliseconds: try int(value, "expires")))
    }

    private static func decodePendingLogout(_ value: JSONValue) throws(TraceError.Reason) -> PendingLogout? {
        guard value != .null else { return nil }
        return PendingLogout(
            state: try string(value, "state"), deadline: Timestamp(milliseconds: try int(value, "deadline")), mvpdID: value["mvpd"]?.string)
    }

    private static func decodePending(_ value: JSONValue) throws(TraceError.Reason) -> PendingLogin? {
        guard value != .null else { return nil }
        return PendingLogin(
            mvpdID: try string(value, "mvpd"), state: try string(value, "state"), code: try string(value, "code"),
            deadline: Timestamp(milliseconds: try int(value, "deadline")), data: try stringMap(value, "data"),
            url: value["url"]?.string, completing: value["completing"]?.bool ?? false)
    }

    /// A metadata answer for `key` with its personal data concealed: the device's id and the user's
    /// metadata are; the expiry times are not.
    private static func concealing(_ value: MetadataValue, of key: MetadataKey, book: inout SecretBook) -> MetadataValue {
        let kind: SecretBook.Kind
        switch key {
        case .authenticationExpiry, .authorizationExpiry: return value
        case .deviceID: kind = .device
        case .userMetadata: kind = .personal
        }
        switch value {
        case .text(let text): return .text(book.concealPersonal(text, as: kind))
        case .list(let items): return .list(items.map { book.concealPersonal($0, as: kind) })
        }
    }

    /// A profile attribute's value with its personal data concealed, shaped as its metadata will be
    /// (``AuthenticationToken/metadataValue(_:)``): a text, a list of texts, or any other value as one
    /// text — so a replayed profile gives the metadata the recorded one gave.
    private static func concealing(_ value: JSONValue, book: inout SecretBook) -> JSONValue {
        guard !book.keepsPersonalData else { return value }
        switch value {
        case .null: return .null
        case .string(let text): return .string(book.concealPersonal(text))
        case .array(let items) where items.allSatisfy({ $0.string != nil }):
            return .array(items.map { .string(book.concealPersonal($0.string ?? "")) })
        default: return .string(book.concealPersonal(value.canonicalText))
        }
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
