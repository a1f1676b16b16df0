import EntitlementEngine
import Synchronization

/// The simulator as an Adobe Pass REST API V2 service, answering `V2Request`s with `V2Response`s.
///
/// Modelled so far: client registration and access tokens (``SimulatedClientRegistrar``), the bearer
/// check on every `/api/v2` request, throttling per device (a burst of 10, then 1 request/s, HTTP
/// 429; keyed by `X-Forwarded-For`, else the device id), and the configuration. Sessions, profiles,
/// decisions and logout are modelled by ``Simulator``, which answers them in process through the
/// backend port; putting them on the wire here comes with `entitle serve`. Until then
/// ``answer(_:context:)`` answers them with nil — "not served" — never with an invented success.
public final class SimulatedV2Service: Sendable {
    /// The world served.
    public let world: SimulatedWorld
    /// Client registration and access tokens.
    public let registrar: SimulatedClientRegistrar
    private let clock: any EngineClock
    private let buckets = Mutex<[String: V2ThrottleBucket]>([:])

    /// A service for `world` on `clock`.
    public init(world: SimulatedWorld = .default, clock: any EngineClock, seed: UInt64 = 11) {
        self.world = world
        self.clock = clock
        self.registrar = SimulatedClientRegistrar(clock: clock, random: SeededRandomSource(seed: seed))
    }

    /// The answer to `request` sent with `context`; nil for a request this simulator does not model yet.
    public func answer(_ request: V2Request, context: V2RequestContext) -> V2Response? {
        guard takeToken(context) else { return .throttled }
        if let registration = registrar.answer(request) { return registration }
        if let refusal = registrar.refusal(bearer: context.bearer) { return refusal }
        switch request {
        case .configuration(let serviceProvider):
            return configuration(serviceProvider)
        default:
            return nil
        }
    }

    /// Throttling per device: one bucket per `X-Forwarded-For` (or device id; requests with neither share one).
    private func takeToken(_ context: V2RequestContext) -> Bool {
        let key = context.forwardedFor ?? context.deviceID ?? ""
        let now = clock.now()
        return buckets.withLock { buckets in buckets[key, default: V2ThrottleBucket()].take(at: now) }
    }

    private func configuration(_ serviceProvider: String) -> V2Response {
        guard let requestor = world.requestor(serviceProvider) else {
            return .error(
                V2EnhancedError(
                    status: 400, code: "invalid_parameter_service_provider",
                    message: "The service provider '\(serviceProvider.prefix(64))' is not known.", action: .none))
        }
        let mvpds = requestor.mvpdIDs.compactMap { world.provider($0) }.map { provider in
            V2Configuration.MVPD(
                id: provider.id, displayName: provider.displayName, logoURL: provider.mvpd.logoURL, isTempPass: provider.tempPass,
                authPerAggregator: provider.perRequestor, enablePlatformServices: provider.platformSSO,
                displayInPlatformPicker: provider.platformSSO)
        }
        let configuration = V2Configuration(requestorID: requestor.id, requestorName: requestor.id, mvpds: mvpds)
        return V2Response(status: 200, body: configuration.json)
    }
}
