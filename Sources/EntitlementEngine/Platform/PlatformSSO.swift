/// The port to the device's system-wide TV-provider account (Apple's video-subscriber framework
/// on iOS/tvOS; on Linux, whatever the embedding app provides — the simulator implements it).
///
/// The engine never trusts the platform's word alone: an assertion is exchanged with the backend,
/// which verifies it, for the engine's own authentication token (cookbook D).
public protocol PlatformSSO: Sendable {
    /// Shows the platform's provider picker for `dialog` and returns what the user did. The app
    /// presents the picker when `presentTvProviderDialog` arrives; cancellation of the calling
    /// task means the engine no longer waits (the answer is then ignored).
    func pickProvider(_ dialog: TvProviderDialog, requestorID: String) async -> PlatformPickerAnswer

    /// Without any UI: the platform's assertion when the device is already signed in to one of
    /// `mvpdIDs` (the requestor's MVPDs that support platform SSO), else nil. `setRequestor` asks
    /// it when nothing valid is stored, and exchanges the assertion silently.
    func signedInAssertion(requestorID: String, mvpdIDs: [String]) async -> PlatformAssertion?
}
