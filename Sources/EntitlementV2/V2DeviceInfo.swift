import EntitlementSupport

/// The streaming device as `X-Device-Info` describes it: base64 of this JSON (Adobe's *X-Device-Info* header page).
/// A server sending on a device's behalf describes the **device**, with its public address and
/// source port in ``connectionIP`` and ``connectionPort``.
public struct V2DeviceInfo: Sendable, Hashable {
    /// The device model (`iPhone`, `AppleTV`, `Roku Ultra`).
    public var model: String
    /// The device's hardware version.
    public var version: String
    /// The operating system (`iOS`, `tvOS`, `Android`).
    public var osName: String
    /// The operating system's version.
    public var osVersion: String
    /// How the device is connected (`WiFi`, `LAN`, `Cellular`).
    public var connectionType: String
    /// One of V2's hardware types (`MobilePhone`, `SetTopBox`, `TV`, …), if known.
    public var primaryHardwareType: String?
    /// The manufacturer, if known.
    public var manufacturer: String?
    /// The application's id (bundle id), if known.
    public var applicationID: String?
    /// The device's public address.
    public var connectionIP: String?
    /// The device's source port.
    public var connectionPort: Int?

    /// Creates a description.
    public init(
        model: String, version: String, osName: String, osVersion: String, connectionType: String,
        primaryHardwareType: String? = nil, manufacturer: String? = nil, applicationID: String? = nil, connectionIP: String? = nil,
        connectionPort: Int? = nil
    ) {
        self.model = model
        self.version = version
        self.osName = osName
        self.osVersion = osVersion
        self.connectionType = connectionType
        self.primaryHardwareType = primaryHardwareType
        self.manufacturer = manufacturer
        self.applicationID = applicationID
        self.connectionIP = connectionIP
        self.connectionPort = connectionPort
    }

    /// A device nothing is known of: every required key `Unknown` (V2's own word for an unknown hardware
    /// type), the public address when known. Sent where `X-Device-Info` is required and the backend
    /// described no device — a truthful header rather than none, which V2 also reads as an unknown
    /// platform. Registration and access tokens, requested by the backend for itself, send it too.
    public static func unknown(publicAddress: String? = nil) -> V2DeviceInfo {
        V2DeviceInfo(
            model: "Unknown", version: "Unknown", osName: "Unknown", osVersion: "Unknown", connectionType: "Unknown",
            primaryHardwareType: "Unknown", connectionIP: publicAddress)
    }

    /// The JSON V2 reads (keys as the reference names them).
    package var json: JSONValue {
        var members: [String: JSONValue] = [
            "model": .string(model), "version": .string(version), "osName": .string(osName), "osVersion": .string(osVersion),
            "connectionType": .string(connectionType),
        ]
        members.set("primaryHardwareType", primaryHardwareType.map(JSONValue.string))
        members.set("manufacturer", manufacturer.map(JSONValue.string))
        members.set("applicationId", applicationID.map(JSONValue.string))
        members.set("connectionIp", connectionIP.map(JSONValue.string))
        members.set("connectionPort", connectionPort.map { .int(Int64($0)) })
        return .object(members)
    }

    /// The header's value: base64 of `json`.
    public var headerValue: String { Base64.encode(json.canonicalBytes) }

    /// Reads a header's value (what the simulator's server does with what a client sent).
    public init(headerValue: String) throws(V2DecodingError) {
        guard let bytes = Base64.decode(headerValue) else { throw V2DecodingError(path: "X-Device-Info", reason: "not base64") }
        let value: JSONValue
        do {
            value = try JSONReader.read(Array(bytes))
        } catch {
            throw V2DecodingError(path: "X-Device-Info", reason: "not JSON")
        }
        let object = try V2Object(value)
        self.init(
            model: try object.string("model"), version: try object.optionalString("version") ?? "", osName: try object.string("osName"),
            osVersion: try object.optionalString("osVersion") ?? "", connectionType: try object.optionalString("connectionType") ?? "",
            primaryHardwareType: try object.optionalString("primaryHardwareType"), manufacturer: try object.optionalString("manufacturer"),
            applicationID: try object.optionalString("applicationId"), connectionIP: try object.optionalString("connectionIp"),
            connectionPort: try object.optionalInt("connectionPort").map { Int(clamping: $0) })
    }
}

/// What the embedding backend knows of one streaming device, sent with every request made for it
/// (Adobe's REST API V2 server-to-server cookbook): its description, public address, Adobe visitor id and promotional
/// TempPass identity.
public struct V2Device: Sendable, Hashable {
    /// `X-Device-Info` (nil: ``V2DeviceInfo/unknown(publicAddress:)`` is sent where the header is required).
    public var info: V2DeviceInfo?
    /// `X-Forwarded-For`: the device's public address. A server must send it: V2 throttles per address.
    public var publicAddress: String?
    /// `AP-Visitor-Identifier` (Experience Cloud id), if any.
    public var visitorID: String?
    /// `AP-TempPass-Identity`: base64 of a JSON identity for promotional TempPass, if any.
    public var tempPassIdentity: String?

    /// Creates a device description.
    public init(info: V2DeviceInfo? = nil, publicAddress: String? = nil, visitorID: String? = nil, tempPassIdentity: String? = nil) {
        self.info = info
        self.publicAddress = publicAddress
        self.visitorID = visitorID
        self.tempPassIdentity = tempPassIdentity
    }
}
