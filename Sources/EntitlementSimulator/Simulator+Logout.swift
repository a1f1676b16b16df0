import EntitlementEngine
import EntitlementSupport

/// Logout: the service deletes the device's profile for the requestor and MVPD first, then says
/// how the MVPD's own logout goes on.
extension Simulator {
    /// `GET logout/{mvpd}`: `logout/interactive` with the MVPD's logout page when it has one (the
    /// page ends the MVPD's session on the device and returns to `redirectURL`); `complete` for
    /// TempPass, degraded access or an MVPD without a logout page; `partner_logout` for a platform
    /// profile; `invalid` when there was no valid profile.
    func logout(_ context: RequestContext, mvpd: String, redirectURL: String) throws(V2EnhancedError) -> [String: V2Logout] {
        let provider = try provider(context, mvpd)
        guard Self.isRedirectURL(redirectURL) else {
            throw Self.refusal(400, "invalid_parameter_redirect_url", "The redirect URL is not a URL.")
        }
        if provider.tempPass || provider.degraded { return [mvpd: V2Logout(actionName: .complete, actionType: .none, mvpd: mvpd)] }
        let key = Self.profileKey(context.deviceID, context.requestorID, mvpd)
        guard let stored = profiles.removeValue(forKey: key), clock.now() < stored.notAfter else {
            return [mvpd: V2Logout(actionName: .invalid, actionType: .none, mvpd: mvpd)]
        }
        if stored.kind == .appleSSO {
            return [mvpd: V2Logout(actionName: .partnerLogout, actionType: .partnerInteractive, mvpd: mvpd)]
        }
        guard provider.hasLogoutPage else { return [mvpd: V2Logout(actionName: .complete, actionType: .none, mvpd: mvpd)] }
        let logoutID = mint("logout.")
        logoutReturns[logoutID] = redirectURL
        let complete = PercentEncoding.url("\(world.serviceProvider)/api/v2/logout/complete", query: [("logout", logoutID)])
        let url = PercentEncoding.url(
            "\(provider.loginHost)/logout", query: [("continue", complete), ("device", context.deviceID)])
        return [mvpd: V2Logout(actionName: .logout, actionType: .interactive, mvpd: mvpd, url: url)]
    }

    /// The MVPD's logout page: ends its own session on the device, then continues to the service
    /// provider (never anywhere else: no open redirector).
    func mvpdLogout(_ provider: SimulatedWorld.Provider, _ query: [String: String]) -> WebResponse {
        guard let next = query["continue"], next.hasPrefix(world.serviceProvider + "/") else {
            return .error(status: 400, message: "Refusing to redirect outside the service provider.")
        }
        if let device = query["device"] { mvpdSessions[device + "|" + provider.id] = nil }
        return .redirect(next)
    }

    /// The end of the logout chain: back to the redirect URL the logout request gave.
    func finishLogout(_ query: [String: String]) -> WebResponse {
        guard let logoutID = query["logout"], let redirectURL = logoutReturns.removeValue(forKey: logoutID) else {
            return .error(status: 400, message: "Unknown logout.")
        }
        return .redirect(redirectURL)
    }
}
