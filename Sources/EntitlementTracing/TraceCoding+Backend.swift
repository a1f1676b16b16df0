import EntitlementEngine

/// Backend requests and answers in a trace.
extension TraceCoding {
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

    static func encode(_ context: RequestContext, book: inout SecretBook) -> JSONValue {
        [
            "requestor": .string(context.requestorID), "device": .string(book.concealPersonal(context.deviceID, as: .device)),
            "options": .object(context.options.mapValues(JSONValue.string)),
        ]
    }

    // MARK: - Backend answers

    /// REST API V2's own JSON for each answer — `{"profiles": …}`, `{"decisions": […]}` and
    /// `{"logouts": …}` as the service sends them; a configuration or a session under its name — with
    /// its secrets (session codes, login URLs, media tokens) concealed.
    static func encode(_ response: BackendResponse, book: inout SecretBook) -> JSONValue {
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

    static func decodeResponse(_ value: JSONValue) throws(TraceError.Reason) -> BackendResponse {
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

    static func encode(_ error: BackendError) -> JSONValue {
        switch error.code {
        case .timeout: ["timeout": true]
        case .httpStatus: ["httpStatus": ["status": .int(Int64(error.status ?? 0)), "message": .string(error.message)]]
        case .throttled: ["throttled": ["retryAfterSeconds": .int(Int64(error.retryAfterSeconds ?? 0))]]
        case .denied: ["denied": ["code": .string(error.denialCode ?? ""), "message": .string(error.message)]]
        default: [error.code.description: .string(error.message)]  // network, retryable, malformedResponse, …
        }
    }

    static func decodeError(_ value: JSONValue) throws(TraceError.Reason) -> BackendError {
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
}
