/// What a device's request gets back from ``AccessEnabler/interact(_:within:)`` (and `SessionHost`'s):
/// the first thing the device must do for the call to go on, or the call's answer — what a
/// request/response backend sends back to the device.
public enum Interaction: Sendable, Hashable {
    /// The call was answered: its terminal callback (or the `status` that refused it).
    case answered(Callback)
    /// The device opens this page: an MVPD's login or logout page (`navigateToUrl`). The call goes on:
    /// it is answered when the flow ends, through the delegate and the streams, and to a later
    /// interaction that joins the flow.
    case openPage(String)
    /// The user chooses a provider among these (`displayProviderDialog`); then `setSelectedProvider`.
    case chooseProvider([MVPD])
    /// The device shows this registration code for a second screen (`status(REGCODE)`).
    case showRegistrationCode(String)

    /// The interaction a callback asks of the device, or nil for a callback that asks nothing of it.
    init?(deviceNeed callback: Callback) {
        switch callback {
        case .navigateToUrl(let url): self = .openPage(url)
        case .displayProviderDialog(let mvpds): self = .chooseProvider(mvpds)
        case .status(let report) where report.code == Notice.registrationCode.code: self = .showRegistrationCode(report.message)
        default: return nil
        }
    }
}
