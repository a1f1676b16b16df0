/// The port to the device's system-wide TV-provider account (Apple's video-subscriber framework
/// on iOS/tvOS; on Linux, whatever the embedding app provides — the simulator implements it).
///
/// The engine never trusts the platform's word alone: before it asks the platform, it fetches the
/// partner's request from the backend (`POST sessions/sso/{partner}`); the platform's framework answers
/// that request with a signed assertion, which the backend verifies and exchanges for the engine's own
/// authentication token (`POST profiles/sso/{partner}`, cookbook D).
public protocol PlatformSSO: Sendable {
    /// Shows the platform's provider picker for `dialog` and returns what the user did; a sign-in's
    /// assertion answers `request` (Apple: the request goes to the video-subscriber account
    /// framework's metadata request). The app presents the picker when `presentTvProviderDialog`
    /// arrives; cancellation of the calling task means the engine no longer waits (the answer is
    /// then ignored).
    func pickProvider(_ dialog: TvProviderDialog, requestorID: String, request: V2PartnerRequest) async -> PlatformPickerAnswer

    /// Without any UI: the platform's assertion answering `request` when the device is already
    /// signed in to one of `mvpdIDs` (the requestor's MVPDs that support platform SSO), else nil.
    /// `setRequestor` asks it when nothing valid is stored, and exchanges the assertion silently.
    func signedInAssertion(requestorID: String, mvpdIDs: [String], request: V2PartnerRequest) async -> PlatformAssertion?
}
