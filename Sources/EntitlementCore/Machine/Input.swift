/// What happened: everything the machine reacts to.
///
/// The cases whose payload is large (the configuration with the stored tokens, backend and provider
/// answers, failures, the tokens another instance stored) are `indirect`: their payload sits behind one
/// reference, so an input is a few words and moves through the shell without copying hundreds of bytes.
package enum Input: Sendable, Hashable {
    /// A public call arrived (`setRequestor` and every entitlement call).
    case callReceived(CallID, EntitlementCall)
    /// `setOptions` replaced the options sent with every backend request.
    case optionsChanged([String: String])
    /// The configuration for `operation` arrived, with the tokens stored for the device and requestor
    /// and the authentications other requestors stored on this device (for single sign-on).
    indirect case configurationLoaded(OperationID, RequestorConfiguration, StoredTokens, others: [AuthenticationToken] = [])
    /// The configuration for `operation` could not be loaded.
    indirect case configurationFailed(OperationID, BackendError)
    /// The shell drew the secrets the machine asked for.
    case flowSecretsDrawn(FlowID, FlowSecrets)
    /// A backend request answered.
    indirect case backendAnswered(OperationID, BackendResponse)
    /// A backend request failed.
    indirect case backendFailed(OperationID, BackendError)
    /// A provider of the chain answered (past the deadline: ``ProviderFailure/networkFailure``).
    indirect case providerAnswered(OperationID, ProviderAnswer)
    /// A timer fired.
    case timerFired(TimerID)
    /// The platform's provider picker for a login flow answered (cookbook D).
    case platformPickerAnswered(FlowID, PlatformPickerAnswer)
    /// The platform said, without UI, whether it is signed in: its assertion, or nil.
    case platformSignInChecked(OperationID, PlatformAssertion?)
    /// Whoever runs the engine stopped waiting for the provider choice of login `flow` (a session host's
    /// time limit passed, or the session closes): that picker ends, and only that one.
    case providerChoiceAbandoned(FlowID)
    /// Shared storage holds another authentication or pending login than this machine last saved:
    /// another instance logged in, out, or started a login (checked before every input).
    indirect case storageChanged(StoredTokens)
    /// The save the last input asked for failed (the reason, with no secret in it): the store
    /// still holds what it held before, and the machine saves again after its next input.
    case storageWriteFailed(String)
    /// A call's step could not be saved (the store refused it, or was away past
    /// ``EngineSettings/storageRetryWindow``), so it was not taken: the call is refused (the reason,
    /// with no secret in it) and nothing changes.
    case callNotSaved(CallID, EntitlementCall, reason: String)
    /// A call could not be decided on what the store holds: the store could not be read (it was away past
    /// ``EngineSettings/storageRetryWindow``), so the call is refused (the reason, with no secret in it)
    /// and nothing changes — no instance answers from a view the store may have moved past.
    case callNotRead(CallID, EntitlementCall, reason: String)
    /// Another instance's renewal of `provider`'s token stopped standing (its timer fired), and the renewal
    /// this instance would start could not be marked in the store (the reason, with no secret in it): it is
    /// not started — another instance could not know of it — and what waited for it fails with the reason.
    case renewalNotMarked(provider: String, reason: String)
}
