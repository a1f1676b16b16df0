/// What the user did in the platform's provider picker.
public enum PlatformPickerAnswer: Sendable, Hashable {
    /// Signed in with a provider the picker offered: the platform's signed assertion for it.
    case signedIn(PlatformAssertion)
    /// Chose "Other TV Providers" (N003): the classic provider dialog follows.
    case otherProviders
    /// Chose a provider the requestor does not support through the platform (N004): the classic
    /// provider dialog follows.
    case unsupportedProvider(String)
    /// Cancelled the picker (N005).
    case cancelled
}
