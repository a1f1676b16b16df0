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
        case .configurationLoaded(let operation, let configuration, let stored, let others):
            record["in"] = "configurationLoaded"
            record["op"] = .int(Int64(truncatingIfNeeded: operation.rawValue))
            record["configuration"] = encode(configuration)
            record["stored"] = encode(stored, book: &book)
            // Written only when another requestor stored something, so single-app traces read as before.
            if !others.isEmpty { record["others"] = .array(others.map { encode($0, book: &book) }) }
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
        case .renewalNotMarked(let provider, let reason):
            record["in"] = "renewalNotMarked"
            record["provider"] = .string(provider)
            record["reason"] = .string(reason)
        case .timerFired(let timer):
            record["in"] = "timerFired"
            record["timer"] = .string(timer.name)
            switch timer {
            case .retry(let operation), .stepUp(let operation), .requestDeadline(let operation):
                record["op"] = .int(Int64(truncatingIfNeeded: operation.rawValue))
            case .providerVerification(let provider), .renewalElsewhere(let provider): record["provider"] = .string(provider)
            case .redirectDeadline(let flow), .registrationPoll(let flow), .registrationExpiry(let flow), .profileRead(let flow):
                record["flow"] = .int(Int64(truncatingIfNeeded: flow.rawValue))
            }
        case .platformPickerAnswered(let flow, let answer):
            record["in"] = "platformPickerAnswered"
            record["flow"] = .int(Int64(truncatingIfNeeded: flow.rawValue))
            record["answer"] = encode(answer, book: &book)
        case .platformSignInChecked(let operation, let assertion):
            record["in"] = "platformSignInChecked"
            record["op"] = .int(Int64(truncatingIfNeeded: operation.rawValue))
            record["assertion"] = assertion.map { encode($0, book: &book) } ?? .null
        case .providerChoiceAbandoned(let flow):
            record["in"] = "providerChoiceAbandoned"
            record["flow"] = .int(Int64(truncatingIfNeeded: flow.rawValue))
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
            // A trace written before 0.15.0 may carry `verified` (the providers' answers at `setRequestor`, which
            // the machine now asks for itself): it is not read, and the replay diverges at the first such request.
            guard let others = (record["others"] ?? .array([])).array else { throw .field("others") }
            input = .configurationLoaded(
                try operation(record), try decodeConfiguration(try member(record, "configuration")),
                try decodeStored(try member(record, "stored")),
                others: try others.map { item throws(TraceError.Reason) in try decodeAuthentication(item) })
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
        case "renewalNotMarked":
            input = .renewalNotMarked(provider: try string(record, "provider"), reason: try string(record, "reason"))
        case "timerFired" where record["timer"]?.string == "retry":
            input = .timerFired(.retry(try operation(record)))
        case "timerFired" where record["timer"]?.string == "stepUp":
            input = .timerFired(.stepUp(try operation(record)))
        case "timerFired" where record["timer"]?.string == "providerVerification":
            input = .timerFired(.providerVerification(try string(record, "provider")))
        case "timerFired" where record["timer"]?.string == "renewalElsewhere":
            input = .timerFired(.renewalElsewhere(try string(record, "provider")))
        case "timerFired" where record["timer"]?.string == "requestDeadline":
            input = .timerFired(.requestDeadline(try operation(record)))
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
        case "providerChoiceAbandoned":
            input = .providerChoiceAbandoned(FlowID(try identifier(record, "flow")))
        default:
            throw .field("in")
        }
        return (input, time)
    }

    // MARK: - Field readers

    static func member(_ value: JSONValue, _ key: String) throws(TraceError.Reason) -> JSONValue {
        guard let member = value[key] else { throw .field(key) }
        return member
    }

    static func string(_ value: JSONValue, _ key: String) throws(TraceError.Reason) -> String {
        guard let text = value[key]?.string else { throw .field(key) }
        return text
    }

    static func int(_ value: JSONValue, _ key: String) throws(TraceError.Reason) -> Int64 {
        guard let number = value[key]?.int else { throw .field(key) }
        return number
    }

    /// A call, flow or operation number: never negative.
    static func identifier(_ value: JSONValue, _ key: String) throws(TraceError.Reason) -> UInt64 {
        let number = try int(value, key)
        guard number >= 0 else { throw .field(key) }
        return UInt64(number)
    }

    static func bool(_ value: JSONValue, _ key: String) throws(TraceError.Reason) -> Bool {
        guard let flag = value[key]?.bool else { throw .field(key) }
        return flag
    }

    static func strings(_ value: JSONValue, _ key: String) throws(TraceError.Reason) -> [String] {
        guard let items = value[key]?.array else { throw .field(key) }
        return try items.map { item throws(TraceError.Reason) in
            guard let text = item.string else { throw .field(key) }
            return text
        }
    }

    static func stringMap(_ value: JSONValue, _ key: String) throws(TraceError.Reason) -> [String: String] {
        guard let members = value[key]?.object else { throw .field(key) }
        var out: [String: String] = [:]
        for (name, member) in members {
            guard let text = member.string else { throw .field(key) }
            out[name] = text
        }
        return out
    }

    /// A recorded operation: its number only (a trace names no owner; a replay finds it from the
    /// request the machine sent).
    static func operation(_ value: JSONValue) throws(TraceError.Reason) -> OperationID {
        OperationID(try identifier(value, "op"), owner: nil)
    }
}
