/// The machine's transition table: every row the machine can take, region by region. The charts
/// in `StateCharts/` are drawn from it, and tests hold it to the code both ways: every row the
/// machine takes must be listed here, and every row listed here must be taken by some scenario
/// (or, for the few no script can reach, by a test that drives the bare machine).
///
/// To change a transition, change the code and this table in the same commit, then regenerate the
/// charts with `swift run entitle chart --write` (see `StateCharts/README.md`).
///
/// Each region's rows come from a function the optimizer skips (`@_optimize(none)`): they are built
/// once, and optimizing the literals cost a cold release build 5–6 s on the package's critical path
/// (`-Xllvm -sil-print-pass-time`: 5.4 s of `EntitlementCore`'s 15.6 s of SIL optimization).
package enum TransitionTable {
    /// Every row, in chart order: by region, then by the source state's place in the region,
    /// then by input, condition and target.
    package static let rows: [TransitionRow] = (
        configurationRows + authenticationRows + authorizationRows + providerRows + callRows + entitlementsRows + accountRows)
        .sorted { lhs, rhs in
            func key(_ row: TransitionRow) -> (Int, Int, String, String, String) {
                let regionIndex = TransitionRow.Region.allCases.firstIndex(of: row.region) ?? 0
                let stateIndex = row.region.states.firstIndex(of: row.from) ?? Int.max
                return (regionIndex, stateIndex, row.input, row.condition ?? "", row.to)
            }
            return key(lhs) < key(rhs)
        }

    /// The rows as a set, for membership checks.
    package static let rowSet = Set(rows)

    /// The rows of one region, in chart order.
    package static func rows(of region: TransitionRow.Region) -> [TransitionRow] { rows.filter { $0.region == region } }


    // MARK: - Configuration

    static let configurationRows = configurationTable()

    @_optimize(none) private static func configurationTable() -> [TransitionRow] { [
        configuration(.configured, .setRequestor, to: .configuring, .loadConfiguration),
        configuration(.configured, .storageWriteFailed, to: .configured, .status),
        configuration(.configuring, .storageWriteFailed, to: .configuring, .status),
        configuration(.configuring, .configurationFailed, .current, to: .failed, .status, .setRequestorComplete, .failQueue),
        configuration(.configuring, .configurationLoaded, .current, to: .configured, .setRequestorComplete, .restoreTokens, .runQueue),
        configuration(.configuring, .configurationLoaded, .platformMayBeSignedIn, to: .signingIn, .requestPartnerSession),
        configuration(.signingIn, .backendAnswered, .partnerRequest, to: .signingIn, .checkPlatformSignIn),
        configuration(.signingIn, .backendAnswered, .partnerFallback, to: .configured, .setRequestorComplete, .runQueue),
        configuration(.configuring, .configurationLoaded, .singleSignOn, to: .signingIn, .readProfiles),
        configuration(.configuring, .configurationLoaded, .passiveAuthentication, to: .signingIn, .status, .readProfiles),
        configuration(.signingIn, .platformSignInChecked, .platformSignedIn, to: .signingIn, .readProfile),
        configuration(.signingIn, .platformSignInChecked, .platformNotSignedIn, to: .configured, .setRequestorComplete, .runQueue),
        configuration(.signingIn, .backendAnswered, .profileMatchesFlow, to: .configured, .setRequestorComplete, .runQueue),
        configuration(.signingIn, .backendAnswered, .malformedAnswer, to: .configured, .setRequestorComplete, .runQueue),
        configuration(.signingIn, .backendAnswered, .noValidStoredToken, to: .configured, .setRequestorComplete, .runQueue),
        configuration(.signingIn, .backendFailed, .failed, to: .configured, .setRequestorComplete, .runQueue),
        configuration(.signingIn, .entitlementCall, .queueHasRoom, to: .signingIn, .enqueue),
        configuration(.signingIn, .entitlementCall, .queueFull, to: .signingIn, .status),
        configuration(.signingIn, .setRequestor, to: .configuring, .loadConfiguration),
        configuration(.configuring, .entitlementCall, .queueFull, to: .configuring, .status),
        configuration(.configuring, .entitlementCall, .queueHasRoom, to: .configuring, .enqueue),
        configuration(.configuring, .setRequestor, to: .configuring, .loadConfiguration),
        configuration(.failed, .entitlementCall, .retryNotDue, to: .failed, .failCall),
        configuration(.failed, .entitlementCall, .retryDue, to: .configuring, .enqueue, .loadConfiguration),
        configuration(.failed, .setRequestor, to: .configuring, .loadConfiguration),
        configuration(.unconfigured, .entitlementCall, .queueFull, to: .unconfigured, .status),
        configuration(.unconfigured, .entitlementCall, .queueHasRoom, to: .unconfigured, .enqueue),
        configuration(.unconfigured, .setRequestor, to: .configuring, .loadConfiguration),
        configuration(.configured, .entitlementCall, .accountUnverified, to: .configured, .enqueue),
        configuration(.configured, .anyInput, .accountVerified, to: .configured, .runQueue),
        // The chain's providers verify what the user may access before `setRequestor` is answered.
        configuration(.configuring, .configurationLoaded, .verifyingProviders, to: .configured, .restoreTokens),
        configuration(.configured, .entitlementCall, .verifyingProviders, to: .configured, .enqueue),
        configuration(.configured, .entitlementCall, .queueFull, to: .configured, .status),
        configuration(.configured, .anyInput, .providersVerified, to: .configured, .setRequestorComplete, .runQueue),
        // The silent sign-in ended (whichever way) before the providers answered: `setRequestor` still waits.
        configuration(.signingIn, .backendAnswered, .verifyingProviders, to: .configured),
        configuration(.signingIn, .backendFailed, .verifyingProviders, to: .configured),
        configuration(.signingIn, .platformSignInChecked, .verifyingProviders, to: .configured),
    ] }

    // MARK: - Authentication

    static let authenticationRows = authenticationTable()

    @_optimize(none) private static func authenticationTable() -> [TransitionRow] {
        // Literals of fifty rows: one literal of all of them took the type checker a second.
        var rows: [TransitionRow] = [
            authentication(.unknown, .configurationLoaded, .pendingLogin, to: .awaitingRedirect, .startTimer),
            authentication(.unauthenticated, .storageChanged, .validStoredToken, to: .authenticated),
            authentication(.unauthenticated, .storageChanged, .pendingLogin, to: .awaitingRedirect, .startTimer),
            authentication(.authenticated, .storageChanged, .validStoredToken, to: .authenticated),
            authentication(.authenticated, .storageChanged, .noValidStoredToken, to: .unauthenticated),
            authentication(.awaitingRedirect, .storageChanged, .validStoredToken, to: .authenticated, .cancelTimer, .setAuthenticationStatus),
            authentication(.awaitingRedirect, .storageChanged, .pendingLoginTaken, to: .awaitingRedirect, .cancelTimer, .startTimer),
            authentication(.awaitingRedirect, .storageChanged, .loginEndedElsewhere, to: .unauthenticated, .cancelTimer, .setAuthenticationStatus),
            authentication(.readingProfile, .storageChanged, .loginEndedElsewhere, to: .unauthenticated, .setAuthenticationStatus),
            authentication(.awaitingSecondScreen, .storageChanged, .loginEndedElsewhere, to: .unauthenticated, .cancelTimer, .setAuthenticationStatus),
            authentication(.awaitingSecondScreen, .storageChanged, .loggedOutElsewhere, to: .unauthenticated, .cancelTimer, .setAuthenticationStatus),
            authentication(.readingProfile, .storageChanged, .loginEndedElsewhere, to: .unauthenticated, .cancelTimer, .setAuthenticationStatus),
            authentication(.readingProfile, .storageChanged, .pendingLogout, to: .unauthenticated, .setAuthenticationStatus),
            authentication(.readingProfile, .storageChanged, .loggedOutElsewhere, to: .unauthenticated, .setAuthenticationStatus),
            authentication(.readingProfile, .storageChanged, .pendingLogout, to: .unauthenticated, .cancelTimer, .setAuthenticationStatus),
            authentication(.awaitingRedirect, .storageChanged, .deadlinePassed, to: .unauthenticated, .cancelTimer, .status, .setAuthenticationStatus),
            authentication(.awaitingRedirect, .storageChanged, .pendingLogin, to: .awaitingRedirect, .cancelTimer, .startTimer),
            authentication(.unknown, .configurationLoaded, .deviceMismatch, to: .unauthenticated, .status),
            authentication(.authenticated, .authenticationExpired, to: .unauthenticated),
            authentication(.authenticated, .authenticationExpired, .tempPass, to: .unauthenticated, .status),
            authentication(.authenticated, .backendFailed, .authenticationRequired, to: .unauthenticated),
            authentication(.authenticated, .backendAnswered, .authenticationRequired, to: .unauthenticated),
            authentication(.authenticated, .getAuthentication, .forced, to: .unauthenticated),
            authentication(.authenticated, .getAuthentication, .notForced, to: .authenticated, .setAuthenticationStatus),
            authentication(.authenticated, .handleExternalURL, .noPendingFlow, to: .authenticated, .status),
            authentication(.authenticated, .logout, to: .preparingLogout, .drawSecrets),
            authentication(.authenticated, .logout, .platformSession, to: .preparingLogout, .status, .drawSecrets),
            authentication(.authenticated, .setRequestor, to: .unknown),
            authentication(.authenticated, .setSelectedProvider, .authenticated, to: .authenticated, .status),
            authentication(.authenticated, .setSelectedProvider, .cancelled, to: .unauthenticated, .setAuthenticationStatus),
            authentication(.selectingProvider, .storageChanged, .validStoredToken, to: .authenticated, .setAuthenticationStatus),
            authentication(.selectingProvider, .storageChanged, .pendingLogin, to: .awaitingRedirect, .startTimer),
            authentication(.selectingProvider, .storageChanged, .pendingLogout, to: .unauthenticated, .setAuthenticationStatus),
            authentication(.platformPicking, .storageChanged, .validStoredToken, to: .authenticated, .dismissTvProviderDialog, .setAuthenticationStatus),
            authentication(.platformPicking, .storageChanged, .pendingLogin, to: .awaitingRedirect, .dismissTvProviderDialog, .startTimer),
            authentication(.selectingProvider, .storageChanged, .pendingRegistration, to: .awaitingSecondScreen, .startTimer, .pollRegistration),
            authentication(.requestingPartnerSession, .storageChanged, .validStoredToken, to: .authenticated, .setAuthenticationStatus),
            authentication(.requestingPartnerSession, .storageChanged, .pendingLogin, to: .awaitingRedirect, .startTimer),
            authentication(.requestingPartnerSession, .storageChanged, .pendingRegistration, to: .awaitingSecondScreen, .startTimer, .pollRegistration),
            authentication(.platformPicking, .storageChanged, .pendingRegistration, to: .awaitingSecondScreen, .dismissTvProviderDialog, .startTimer, .pollRegistration),
            authentication(.unknown, .configurationLoaded, .pendingLogout, to: .loggingOut, .startTimer),
            authentication(.unknown, .configurationLoaded, .pendingRegistration, to: .awaitingSecondScreen, .startTimer, .pollRegistration),
            authentication(.unauthenticated, .storageChanged, .pendingLogout, to: .loggingOut, .startTimer),
            authentication(.authenticated, .storageChanged, .pendingLogout, to: .loggingOut, .startTimer),
            authentication(.authenticated, .storageChanged, .pendingLogin, to: .awaitingRedirect, .startTimer),
            authentication(.awaitingRedirect, .storageChanged, .pendingLogout, to: .unauthenticated, .cancelTimer, .setAuthenticationStatus),
            authentication(.loggingOut, .storageChanged, .pendingLogout, to: .loggingOut, .cancelTimer, .startTimer),
            authentication(.loggingOut, .storageChanged, .pendingLogoutTaken, to: .unauthenticated, .cancelTimer, .setAuthenticationStatus),
            authentication(.awaitingRedirect, .getAuthentication, .startedElsewhere, to: .awaitingRedirect, .join, .readProfile),
            authentication(.awaitingRedirect, .getAuthentication, .startedElsewhere, to: .awaitingRedirect, .join),
            authentication(.awaitingRedirect, .getAuthentication, .pageAskedAgain, to: .awaitingRedirect, .join, .readProfile),
        ]
        rows += [
            authentication(.awaitingRedirect, .getAuthentication, .pageAskedAgain, to: .awaitingRedirect, .join),
            authentication(.awaitingRedirect, .handleExternalURL, .startedElsewhere, to: .awaitingRedirect, .join, .readProfile),
            authentication(.awaitingRedirect, .handleExternalURL, .startedElsewhere, to: .awaitingRedirect, .join),
            authentication(.awaitingRedirect, .getAuthorization, .startedElsewhere, to: .awaitingRedirect, .readProfile),
            authentication(.awaitingRedirect, .getAuthorization, .startedElsewhere, to: .awaitingRedirect),
            authentication(.awaitingRedirect, .getAuthorization, .pageAskedAgain, to: .awaitingRedirect, .readProfile),
            authentication(.awaitingRedirect, .getAuthorization, .pageAskedAgain, to: .awaitingRedirect),
            authentication(.awaitingRedirect, .backendAnswered, .profileMatchesFlow, to: .authenticated, .cancelTimer, .setAuthenticationStatus),
            authentication(.awaitingRedirect, .backendAnswered, .profileNotYet, to: .awaitingRedirect, .navigateToUrl),
            authentication(.awaitingRedirect, .backendFailed, .profileNotYet, to: .awaitingRedirect, .navigateToUrl),
            authentication(.awaitingRedirect, .backendFailed, .sessionGone, to: .preparingLogin, .cancelTimer, .drawSecrets),
            authentication(.awaitingRedirect, .backendAnswered, .completingElsewhere, to: .awaitingRedirect),
            authentication(.awaitingRedirect, .backendFailed, .completingElsewhere, to: .awaitingRedirect),
            authentication(.awaitingRedirect, .handleExternalURL, .accepted, to: .readingProfile, .cancelTimer, .readProfile),
            authentication(.awaitingRedirect, .handleExternalURL, .deadlinePassed, to: .unauthenticated, .cancelTimer, .status, .setAuthenticationStatus),
            authentication(.awaitingRedirect, .handleExternalURL, .providerError, to: .unauthenticated, .cancelTimer, .status, .setAuthenticationStatus),
            authentication(.awaitingRedirect, .handleExternalURL, .refused, to: .awaitingRedirect, .status),
            authentication(.awaitingRedirect, .logout, to: .unauthenticated, .cancelTimer, .setAuthenticationStatus),
            authentication(.awaitingRedirect, .setRequestor, to: .unauthenticated, .cancelTimer, .setAuthenticationStatus),
            authentication(.awaitingRedirect, .setSelectedProvider, to: .preparingLogin, .cancelTimer, .trackSelection, .drawSecrets),
            authentication(.awaitingRedirect, .setSelectedProvider, .tempPass, to: .creatingSession, .cancelTimer, .trackSelection, .createSession),
            authentication(.awaitingRedirect, .setSelectedProvider, .cancelled, to: .unauthenticated, .cancelTimer, .setAuthenticationStatus),
            authentication(.awaitingRedirect, .timerFired, to: .unauthenticated, .cancelTimer, .status, .setAuthenticationStatus),
            authentication(.readingProfile, .backendAnswered, .malformedAnswer, to: .unauthenticated, .status, .setAuthenticationStatus),
            authentication(.readingProfile, .backendAnswered, .profileMatchesFlow, to: .authenticated, .setAuthenticationStatus),
            authentication(.readingProfile, .backendAnswered, .tempPass, to: .authenticated, .status, .setAuthenticationStatus),
            authentication(.readingProfile, .backendAnswered, .degraded, to: .authenticated, .status, .setAuthenticationStatus),
            authentication(.readingProfile, .backendFailed, .failed, to: .unauthenticated, .status, .setAuthenticationStatus),
            authentication(.readingProfile, .getAuthentication, to: .readingProfile, .join),
            authentication(.readingProfile, .handleExternalURL, .noPendingFlow, to: .readingProfile, .status),
            authentication(.readingProfile, .backendFailed, .sessionGone, to: .readingProfile, .readProfile),
            authentication(.readingProfile, .logout, to: .unauthenticated, .setAuthenticationStatus),
            authentication(.readingProfile, .setRequestor, to: .unauthenticated, .setAuthenticationStatus),
            authentication(.readingProfile, .setSelectedProvider, .cancelled, to: .unauthenticated, .setAuthenticationStatus),
            authentication(.readingProfile, .setSelectedProvider, .profileReadInProgress, to: .readingProfile, .status),
            authentication(.loggingOut, .getAuthentication, .loginRequested, to: .unauthenticated, .cancelTimer, .setAuthenticationStatus),
            authentication(.loggingOut, .getAuthorization, .loginRequested, to: .unauthenticated, .cancelTimer, .setAuthenticationStatus),
            authentication(.loggingOut, .handleExternalURL, .accepted, to: .unauthenticated, .cancelTimer, .setAuthenticationStatus),
            authentication(.loggingOut, .handleExternalURL, .deadlinePassed, to: .unauthenticated, .cancelTimer, .setAuthenticationStatus),
            authentication(.loggingOut, .handleExternalURL, .refused, to: .loggingOut, .status),
            authentication(.loggingOut, .logout, to: .loggingOut, .join),
            authentication(.loggingOut, .setRequestor, to: .unauthenticated, .cancelTimer, .setAuthenticationStatus),
            authentication(.loggingOut, .setSelectedProvider, .cancelled, to: .unauthenticated, .cancelTimer, .setAuthenticationStatus),
            authentication(.loggingOut, .setSelectedProvider, .loginRequested, to: .unauthenticated, .cancelTimer, .setAuthenticationStatus),
            authentication(.loggingOut, .timerFired, to: .unauthenticated, .cancelTimer, .status, .setAuthenticationStatus),
            authentication(.requestingPartnerSession, .backendAnswered, .partnerRequest, to: .platformPicking, .presentTvProviderDialog),
            authentication(.requestingPartnerSession, .backendAnswered, .partnerFallback, to: .selectingProvider, .displayProviderDialog),
            authentication(.requestingPartnerSession, .backendFailed, .failed, to: .selectingProvider, .displayProviderDialog),
            authentication(.requestingPartnerSession, .getAuthentication, to: .requestingPartnerSession, .join),
            authentication(.requestingPartnerSession, .handleExternalURL, .noPendingFlow, to: .requestingPartnerSession, .status),
            authentication(.requestingPartnerSession, .logout, to: .unauthenticated, .setAuthenticationStatus),
            authentication(.requestingPartnerSession, .setRequestor, to: .unauthenticated, .setAuthenticationStatus),
        ]
        rows += [
            authentication(.requestingPartnerSession, .setSelectedProvider, to: .preparingLogin, .trackSelection, .drawSecrets),
            authentication(.requestingPartnerSession, .setSelectedProvider, .cancelled, to: .unauthenticated, .setAuthenticationStatus),
            authentication(.platformPicking, .getAuthentication, to: .platformPicking, .join),
            authentication(.platformPicking, .handleExternalURL, .noPendingFlow, to: .platformPicking, .status),
            authentication(.platformPicking, .logout, to: .unauthenticated, .dismissTvProviderDialog, .setAuthenticationStatus),
            authentication(.platformPicking, .platformPickerAnswered, .cancelled, to: .unauthenticated, .dismissTvProviderDialog, .status, .setAuthenticationStatus),
            authentication(.platformPicking, .platformPickerAnswered, .otherProviders, to: .selectingProvider, .dismissTvProviderDialog, .status, .displayProviderDialog),
            authentication(.platformPicking, .platformPickerAnswered, .platformSignedIn, to: .readingProfile, .readProfile),
            authentication(.platformPicking, .platformPickerAnswered, .unsupportedProvider, to: .selectingProvider, .dismissTvProviderDialog, .status, .displayProviderDialog),
            authentication(.platformPicking, .setRequestor, to: .unauthenticated, .dismissTvProviderDialog, .setAuthenticationStatus),
            authentication(.platformPicking, .setSelectedProvider, to: .preparingLogin, .dismissTvProviderDialog, .trackSelection, .drawSecrets),
            authentication(.platformPicking, .setSelectedProvider, .tempPass, to: .creatingSession, .dismissTvProviderDialog, .trackSelection, .createSession),
            authentication(.platformPicking, .setSelectedProvider, .cancelled, to: .unauthenticated, .dismissTvProviderDialog, .setAuthenticationStatus),
            authentication(.platformPicking, .providerChoiceAbandoned, to: .unauthenticated, .dismissTvProviderDialog, .setAuthenticationStatus),
            authentication(.preparingLogin, .flowSecretsDrawn, to: .creatingSession, .createSession),
            authentication(.creatingSession, .backendAnswered, .loginNeeded, to: .awaitingRedirect, .startTimer, .navigateToUrl),
            authentication(.creatingSession, .backendAnswered, .noLoginNeeded, to: .readingProfile, .readProfile),
            authentication(.creatingSession, .backendAnswered, .tempPass, to: .readingProfile, .readProfile),
            authentication(.readingProfile, .backendAnswered, .profileNotYet, to: .readingProfile, .startTimer),
            authentication(.readingProfile, .backendFailed, .throttled, to: .readingProfile, .startTimer),
            authentication(.readingProfile, .backendAnswered, .profileWaitOver, to: .unauthenticated, .status, .setAuthenticationStatus),
            authentication(.readingProfile, .timerFired, .pollDue, to: .readingProfile, .readProfile),
            authentication(.readingProfile, .logout, to: .unauthenticated, .cancelTimer, .setAuthenticationStatus),
            authentication(.readingProfile, .setRequestor, to: .unauthenticated, .cancelTimer, .setAuthenticationStatus),
            authentication(.readingProfile, .setSelectedProvider, .cancelled, to: .unauthenticated, .cancelTimer, .setAuthenticationStatus),
            authentication(.preparingLogin, .flowSecretsDrawn, .secondScreen, to: .creatingSession, .createSession),
            authentication(.creatingSession, .backendAnswered, .codeIssued, to: .awaitingSecondScreen, .status, .startTimer),
            authentication(.creatingSession, .backendAnswered, .malformedAnswer, to: .unauthenticated, .status, .setAuthenticationStatus),
            authentication(.creatingSession, .backendAnswered, .missingParameters, to: .creatingSession, .resumeSession),
            authentication(.creatingSession, .backendFailed, .failed, to: .unauthenticated, .status, .setAuthenticationStatus),
            authentication(.creatingSession, .getAuthentication, to: .creatingSession, .join),
            authentication(.creatingSession, .handleExternalURL, .noPendingFlow, to: .creatingSession, .status),
            authentication(.creatingSession, .logout, to: .unauthenticated, .setAuthenticationStatus),
            authentication(.creatingSession, .setRequestor, to: .unauthenticated, .setAuthenticationStatus),
            authentication(.creatingSession, .setSelectedProvider, to: .preparingLogin, .trackSelection, .drawSecrets),
            authentication(.creatingSession, .setSelectedProvider, .cancelled, to: .unauthenticated, .setAuthenticationStatus),
            authentication(.creatingSession, .setSelectedProvider, .tempPass, to: .creatingSession, .trackSelection, .createSession),
            authentication(.awaitingSecondScreen, .backendAnswered, .failed, to: .awaitingSecondScreen, .startTimer),
            authentication(.awaitingSecondScreen, .backendAnswered, .notYetUsed, to: .awaitingSecondScreen, .startTimer),
            authentication(.awaitingSecondScreen, .backendAnswered, .codePending, to: .awaitingSecondScreen, .startTimer),
            authentication(.awaitingSecondScreen, .backendFailed, .codeRefused, to: .awaitingSecondScreen, .checkSession),
            authentication(.awaitingSecondScreen, .backendAnswered, .profileMatchesFlow, to: .authenticated, .cancelTimer, .setAuthenticationStatus),
            authentication(.awaitingSecondScreen, .backendFailed, .failed, to: .awaitingSecondScreen, .startTimer),
            authentication(.awaitingSecondScreen, .backendAnswered, .notYetUsed, to: .awaitingSecondScreen, .status, .startTimer),
            authentication(.awaitingSecondScreen, .backendAnswered, .codePending, to: .awaitingSecondScreen, .status, .startTimer),
            authentication(.awaitingSecondScreen, .backendAnswered, .failed, to: .awaitingSecondScreen, .status, .startTimer),
            authentication(.awaitingSecondScreen, .backendFailed, .failed, to: .awaitingSecondScreen, .status, .startTimer),
            authentication(.awaitingSecondScreen, .backendFailed, .sessionGone, to: .preparingLogin, .cancelTimer, .drawSecrets),
            authentication(.awaitingSecondScreen, .getAuthentication, .codeAskedAgain, to: .awaitingSecondScreen, .join, .cancelTimer, .pollRegistration),
            authentication(.awaitingSecondScreen, .getAuthentication, .codeAskedAgain, to: .awaitingSecondScreen, .join),
            authentication(.awaitingSecondScreen, .getAuthorization, .codeAskedAgain, to: .awaitingSecondScreen, .cancelTimer, .pollRegistration),
            authentication(.awaitingSecondScreen, .getAuthorization, .codeAskedAgain, to: .awaitingSecondScreen),
            authentication(.awaitingSecondScreen, .handleExternalURL, .noPendingFlow, to: .awaitingSecondScreen, .status),
            authentication(.awaitingSecondScreen, .logout, to: .unauthenticated, .cancelTimer, .setAuthenticationStatus),
            authentication(.awaitingSecondScreen, .setRequestor, to: .unauthenticated, .cancelTimer, .setAuthenticationStatus),
            authentication(.awaitingSecondScreen, .setSelectedProvider, to: .preparingLogin, .cancelTimer, .trackSelection, .drawSecrets),
            authentication(.awaitingSecondScreen, .setSelectedProvider, .cancelled, to: .unauthenticated, .cancelTimer, .setAuthenticationStatus),
            authentication(.awaitingSecondScreen, .setSelectedProvider, .tempPass, to: .creatingSession, .cancelTimer, .trackSelection, .createSession),
        ]
        rows += [
            authentication(.awaitingSecondScreen, .timerFired, .codeExpired, to: .unauthenticated, .cancelTimer, .status, .setAuthenticationStatus),
            authentication(.awaitingSecondScreen, .backendFailed, .codeExpired, to: .unauthenticated, .cancelTimer, .status, .setAuthenticationStatus),
            authentication(.awaitingSecondScreen, .timerFired, .pollDue, to: .awaitingSecondScreen, .pollRegistration),
            authentication(.awaitingSecondScreen, .storageChanged, .validStoredToken, to: .authenticated, .cancelTimer, .setAuthenticationStatus),
            authentication(.preparingLogout, .flowSecretsDrawn, to: .requestingLogout, .requestLogout),
            authentication(.requestingLogout, .backendAnswered, .interactive, to: .loggingOut, .startTimer, .navigateToUrl),
            authentication(.requestingLogout, .backendAnswered, .noInteraction, to: .unauthenticated, .setAuthenticationStatus),
            authentication(.requestingLogout, .backendAnswered, .malformedAnswer, to: .unauthenticated, .status, .setAuthenticationStatus),
            authentication(.requestingLogout, .backendFailed, .failed, to: .unauthenticated, .status, .setAuthenticationStatus),
            authentication(.requestingLogout, .logout, to: .requestingLogout, .join),
            authentication(.requestingLogout, .handleExternalURL, .noPendingFlow, to: .requestingLogout, .status),
            authentication(.requestingLogout, .backendAnswered, .pendingLogin, to: .unauthenticated, .setAuthenticationStatus),
            authentication(.requestingLogout, .backendFailed, .pendingLogin, to: .unauthenticated, .setAuthenticationStatus),
            authentication(.unauthenticated, .backendAnswered, .pendingLogin, to: .awaitingRedirect, .startTimer),
            authentication(.unauthenticated, .backendFailed, .pendingLogin, to: .awaitingRedirect, .startTimer),
            authentication(.requestingLogout, .handleExternalURL, .pendingLogin, to: .unauthenticated, .setAuthenticationStatus),
            authentication(.unauthenticated, .handleExternalURL, .pendingLogin, to: .awaitingRedirect, .startTimer),
            authentication(.requestingLogout, .getAuthentication, .logoutInProgress, to: .requestingLogout, .status),
            authentication(.requestingLogout, .setSelectedProvider, .logoutInProgress, to: .requestingLogout, .status),
            authentication(.requestingLogout, .setRequestor, to: .unauthenticated, .setAuthenticationStatus),
            authentication(.requestingLogout, .setSelectedProvider, .cancelled, to: .unauthenticated, .setAuthenticationStatus),
            authentication(.selectingProvider, .getAuthentication, to: .selectingProvider, .join, .displayProviderDialog),
            authentication(.selectingProvider, .getAuthorization, to: .selectingProvider, .displayProviderDialog),
            authentication(.selectingProvider, .handleExternalURL, .noPendingFlow, to: .selectingProvider, .status),
            authentication(.selectingProvider, .logout, to: .unauthenticated, .setAuthenticationStatus),
            authentication(.selectingProvider, .setRequestor, to: .unauthenticated, .setAuthenticationStatus),
            authentication(.selectingProvider, .setSelectedProvider, to: .preparingLogin, .trackSelection, .drawSecrets),
            authentication(.selectingProvider, .setSelectedProvider, .tempPass, to: .creatingSession, .trackSelection, .createSession),
            authentication(.selectingProvider, .setSelectedProvider, .cancelled, to: .unauthenticated, .setAuthenticationStatus),
            authentication(.selectingProvider, .providerChoiceAbandoned, to: .unauthenticated, .setAuthenticationStatus),
            authentication(.unauthenticated, .getAuthentication, .noRememberedProvider, to: .selectingProvider, .displayProviderDialog),
            authentication(.unauthenticated, .getAuthentication, .pendingRegistration, to: .awaitingSecondScreen, .startTimer, .pollRegistration),
            authentication(.unauthenticated, .getAuthorization, .pendingRegistration, to: .awaitingSecondScreen, .startTimer, .pollRegistration),
            authentication(.unauthenticated, .getAuthentication, .platformProviders, to: .requestingPartnerSession, .requestPartnerSession),
            authentication(.unauthenticated, .getAuthorization, .platformProviders, to: .requestingPartnerSession, .requestPartnerSession),
            authentication(.unauthenticated, .getAuthentication, .rememberedProvider, to: .preparingLogin, .drawSecrets),
            authentication(.unauthenticated, .getAuthorization, .noRememberedProvider, to: .selectingProvider, .displayProviderDialog),
            authentication(.unauthenticated, .getAuthorization, .rememberedProvider, to: .preparingLogin, .drawSecrets),
            authentication(.unauthenticated, .handleExternalURL, .noPendingFlow, to: .unauthenticated, .status),
            authentication(.unauthenticated, .logout, .notAuthenticated, to: .unauthenticated, .setAuthenticationStatus),
            authentication(.unauthenticated, .logout, to: .preparingLogout, .drawSecrets),
            authentication(.unauthenticated, .setRequestor, to: .unknown),
            authentication(.unauthenticated, .setSelectedProvider, to: .preparingLogin, .trackSelection, .drawSecrets),
            authentication(.unauthenticated, .setSelectedProvider, .tempPass, to: .creatingSession, .trackSelection, .createSession),
            authentication(.unauthenticated, .setSelectedProvider, .cancelled, to: .unauthenticated, .setAuthenticationStatus),
            authentication(.unknown, .configurationLoaded, .noValidStoredToken, to: .unauthenticated),
            authentication(.unknown, .platformSignInChecked, .noValidStoredToken, to: .unauthenticated),
            authentication(.unknown, .backendAnswered, .platformSignedIn, to: .authenticated),
            authentication(.unknown, .backendAnswered, .singleSignOn, to: .authenticated),
            authentication(.unknown, .backendAnswered, .noValidStoredToken, to: .unauthenticated),
            authentication(.unknown, .backendFailed, .noValidStoredToken, to: .unauthenticated),
        ]
        rows += [
            authentication(.unknown, .configurationLoaded, .validStoredToken, to: .authenticated),
        ]
        return rows
    }

    // MARK: - Authorization

    static let authorizationRows = authorizationTable()

    @_optimize(none) private static func authorizationTable() -> [TransitionRow] { [
        authorization(.waitingForAuthentication, .storageChanged, .loginSucceeded, to: .authorizing, .authorize),
        authorization(.waitingForAuthentication, .storageChanged, to: .idle, .tokenRequestFailed),
        authorization(.authorizing, .backendAnswered, to: .idle, .setToken),
        authorization(.authorizing, .backendAnswered, .tempPass, to: .idle, .status, .setToken),
        authorization(.authorizing, .backendAnswered, .degraded, to: .idle, .status, .setToken),
        authorization(.authorizing, .backendAnswered, .authenticationRequired, to: .idle, .tokenRequestFailed),
        authorization(.authorizing, .backendAnswered, .tempPass, to: .idle, .status, .tokenRequestFailed),
        authorization(.authorizing, .backendAnswered, .denied, to: .idle, .status, .tokenRequestFailed),
        authorization(.authorizing, .backendAnswered, .failed, to: .idle, .tokenRequestFailed),
        authorization(.authorizing, .backendAnswered, .malformedAnswer, to: .idle, .tokenRequestFailed),
        authorization(.authorizing, .backendAnswered, .notAuthenticated, to: .idle, .tokenRequestFailed),
        authorization(.authorizing, .backendFailed, .authenticationRequired, to: .idle, .tokenRequestFailed),
        authorization(.authorizing, .backendFailed, .tempPass, to: .idle, .status, .tokenRequestFailed),
        authorization(.authorizing, .backendFailed, .denied, to: .idle, .status, .tokenRequestFailed),
        authorization(.authorizing, .backendFailed, .throttled, to: .idle, .status, .tokenRequestFailed),
        authorization(.authorizing, .backendFailed, .failed, to: .idle, .tokenRequestFailed),
        authorization(.authorizing, .backendFailed, .notAuthenticated, to: .idle, .tokenRequestFailed),
        authorization(.authorizing, .checkAuthorization, .identicalRequest, to: .authorizing, .join),
        authorization(.authorizing, .getAuthorization, .identicalRequest, to: .authorizing, .join),
        authorization(.authorizing, .logout, to: .idle, .tokenRequestFailed),
        authorization(.authorizing, .storageChanged, .noValidStoredToken, to: .idle, .tokenRequestFailed),
        authorization(.authorizing, .storageChanged, .loggedOutElsewhere, to: .idle, .tokenRequestFailed),
        authorization(.authorizing, .setRequestor, to: .idle, .tokenRequestFailed),
        authorization(.authorizing, .setSelectedProvider, to: .idle, .tokenRequestFailed),
        authorization(.idle, .checkAuthorization, .notAuthenticated, to: .idle, .tokenRequestFailed),
        authorization(.idle, .checkAuthorization, to: .authorizing, .authorize),
        authorization(.idle, .getAuthorization, .logoutInProgress, to: .idle, .status),
        authorization(.idle, .getAuthorization, .notAuthenticated, to: .waitingForAuthentication),
        authorization(.idle, .getAuthorization, to: .authorizing, .authorize),
        authorization(.waitingForAuthentication, .backendAnswered, to: .idle, .tokenRequestFailed),
        authorization(.waitingForAuthentication, .backendAnswered, .loginSucceeded, to: .authorizing, .authorize),
        authorization(.waitingForAuthentication, .backendFailed, to: .idle, .tokenRequestFailed),
        authorization(.waitingForAuthentication, .checkAuthorization, .notAuthenticated, to: .waitingForAuthentication, .tokenRequestFailed),
        authorization(.waitingForAuthentication, .getAuthorization, .identicalRequest, to: .waitingForAuthentication, .join),
        authorization(.waitingForAuthentication, .handleExternalURL, to: .idle, .tokenRequestFailed),
        authorization(.waitingForAuthentication, .logout, to: .idle, .tokenRequestFailed),
        authorization(.waitingForAuthentication, .setRequestor, to: .idle, .tokenRequestFailed),
        authorization(.waitingForAuthentication, .setSelectedProvider, to: .idle, .tokenRequestFailed),
        authorization(.waitingForAuthentication, .timerFired, to: .idle, .tokenRequestFailed),
        authorization(.waitingForAuthentication, .platformPickerAnswered, to: .idle, .tokenRequestFailed),
        authorization(.waitingForAuthentication, .providerChoiceAbandoned, to: .idle, .tokenRequestFailed),
    ] }

    // MARK: - Calls

    static let callRows = callTable()

    @_optimize(none) private static func callTable() -> [TransitionRow] { [
        call(.idle, .checkPreauthorizedResources, .cachedDecisions, to: .idle, .preauthorizedResources),
        call(.idle, .checkPreauthorizedResources, .tooManyResources, to: .idle, .status),
        call(.idle, .checkPreauthorizedResources, .emptyArgument, to: .idle, .status),
        call(.preauthorizing, .backendAnswered, .partialFailure, to: .idle, .status, .preauthorizedResources),
        call(.idle, .checkAuthentication, .localAnswer, to: .idle, .setAuthenticationStatus),
        call(.idle, .checkAuthorization, .emptyArgument, to: .idle, .status),
        call(.idle, .checkPreauthorizedResources, .authenticated, to: .preauthorizing, .preauthorize),
        call(.idle, .checkPreauthorizedResources, .localAnswer, to: .idle, .preauthorizedResources),
        call(.idle, .getAuthorization, .emptyArgument, to: .idle, .status),
        call(.idle, .getMetadata, .emptyArgument, to: .idle, .status),
        call(.idle, .getMetadata, .localAnswer, to: .idle, .setMetadataStatus),
        call(.idle, .getSelectedProvider, .localAnswer, to: .idle, .selectedProvider),
        call(.idle, .handleExternalURL, .badURL, to: .idle, .status),
        call(.idle, .optionsChanged, to: .idle),
        call(.idle, .callNotSaved, to: .idle, .status),
        call(.idle, .callNotRead, to: .idle, .status),
        call(.idle, .backendFailed, .retryAsked, to: .idle, .startTimer),
        call(.idle, .backendAnswered, .retryAsked, to: .idle, .startTimer),
        call(.idle, .configurationFailed, .retryAsked, to: .idle, .startTimer),
        call(.idle, .timerFired, .retryDue, to: .idle, .resendRequest),
        call(.idle, .anyInput, .throttled, to: .idle, .startTimer),
        call(.idle, .setRequestor, .emptyArgument, to: .idle, .status),
        call(.idle, .setSelectedProvider, .unknownProvider, to: .idle, .status),
        call(.idle, .signIn, .unknownProvider, to: .idle, .status),
        call(.idle, .signOut, .unknownProvider, to: .idle, .status),
        call(.idle, .completeStepUp, .noStepUpPending, to: .idle, .status),
        call(.preauthorizing, .backendAnswered, to: .idle, .preauthorizedResources),
        call(.preauthorizing, .backendAnswered, .malformedAnswer, to: .idle, .status, .preauthorizedResources),
        call(.preauthorizing, .backendFailed, to: .idle, .status, .preauthorizedResources),
        call(.preauthorizing, .backendFailed, .authenticationRequired, to: .idle, .status, .preauthorizedResources),
        call(.preauthorizing, .backendAnswered, .authenticationRequired, to: .idle, .status, .preauthorizedResources),
        call(.preauthorizing, .logout, to: .idle, .preauthorizedResources),
        call(.preauthorizing, .storageChanged, .noValidStoredToken, to: .idle, .preauthorizedResources),
        call(.preauthorizing, .storageChanged, .loggedOutElsewhere, to: .idle, .preauthorizedResources),
        call(.preauthorizing, .setRequestor, to: .idle, .preauthorizedResources),
        call(.preauthorizing, .setSelectedProvider, to: .idle, .preauthorizedResources),
    ] }

    // MARK: - Provider chain (authorization region)

    static let providerRows = providerTable()

    @_optimize(none) private static func providerTable() -> [TransitionRow] { [
        authorization(.idle, .getAuthorization, .providerClaims, to: .askingProvider, .askProvider),
        authorization(.idle, .checkAuthorization, .providerClaims, to: .askingProvider, .askProvider),
        authorization(.idle, .getAuthorization, .providerBusy, to: .waitingForProvider),
        authorization(.idle, .checkAuthorization, .providerBusy, to: .waitingForProvider),
        authorization(.askingProvider, .providerAnswered, .credentialsGiven, to: .idle, .setToken),
        authorization(.askingProvider, .providerAnswered, .providerFailed, to: .idle, .tokenRequestFailed),
        authorization(.askingProvider, .checkAuthorization, .identicalRequest, to: .askingProvider, .join),
        authorization(.askingProvider, .getAuthorization, .identicalRequest, to: .askingProvider, .join),
        authorization(.askingProvider, .logout, to: .idle, .tokenRequestFailed),
        authorization(.askingProvider, .storageChanged, .noValidStoredToken, to: .idle, .tokenRequestFailed),
        authorization(.askingProvider, .storageChanged, .loggedOutElsewhere, to: .idle, .tokenRequestFailed),
        authorization(.askingProvider, .setSelectedProvider, to: .idle, .tokenRequestFailed),
        authorization(.askingProvider, .setRequestor, to: .idle, .tokenRequestFailed),
        authorization(.waitingForProvider, .providerAnswered, to: .askingProvider, .askProvider),
        authorization(.waitingForProvider, .checkAuthorization, .identicalRequest, to: .waitingForProvider, .join),
        authorization(.waitingForProvider, .getAuthorization, .identicalRequest, to: .waitingForProvider, .join),
        authorization(.waitingForProvider, .logout, to: .idle, .tokenRequestFailed),
        authorization(.waitingForProvider, .storageChanged, .noValidStoredToken, to: .idle, .tokenRequestFailed),
        authorization(.waitingForProvider, .storageChanged, .loggedOutElsewhere, to: .idle, .tokenRequestFailed),
        authorization(.waitingForProvider, .setSelectedProvider, to: .idle, .tokenRequestFailed),
        authorization(.waitingForProvider, .setRequestor, to: .idle, .tokenRequestFailed),
        authorization(.waitingForProvider, .renewalNotMarked, .notSaved, to: .idle, .tokenRequestFailed),
        authorization(.idle, .checkAuthorization, .keptCredentials, to: .idle, .setToken),
        authorization(.idle, .getAuthorization, .keptCredentials, to: .idle, .setToken),
        authorization(.askingProvider, .providerAnswered, .invalidToken, to: .waitingForProvider),
        authorization(.waitingForProvider, .providerAnswered, .renewed, to: .askingProvider, .askProvider),
        authorization(.waitingForProvider, .providerAnswered, .signedIn, to: .askingProvider, .askProvider),
        authorization(.waitingForProvider, .providerAnswered, .signedOut, to: .idle, .tokenRequestFailed),
        authorization(.waitingForProvider, .providerAnswered, .notSaved, to: .idle, .tokenRequestFailed),
        authorization(.waitingForProvider, .signOut, .signedOut, to: .idle, .tokenRequestFailed),
        authorization(.waitingForProvider, .storageChanged, .signedOut, to: .idle, .tokenRequestFailed),
        authorization(.askingProvider, .providerAnswered, .renewedElsewhere, to: .askingProvider, .askProvider),
        authorization(.waitingForProvider, .storageChanged, .renewedElsewhere, to: .askingProvider, .askProvider),
        authorization(.waitingForProvider, .timerFired, .signedOut, to: .idle, .tokenRequestFailed),
        authorization(.askingProvider, .providerAnswered, .stepUpRequired, to: .awaitingStepUp, .stepUpRequired, .startTimer),
        authorization(.awaitingStepUp, .completeStepUp, .stepUpSucceeded, to: .askingProvider, .cancelTimer, .askProvider),
        authorization(.awaitingStepUp, .completeStepUp, .stepUpFailed, to: .idle, .cancelTimer, .tokenRequestFailed),
        authorization(.awaitingStepUp, .timerFired, to: .idle, .tokenRequestFailed),
        authorization(.awaitingStepUp, .completeStepUp, .deadlinePassed, to: .idle, .cancelTimer, .tokenRequestFailed),
        authorization(.awaitingStepUp, .checkAuthorization, .identicalRequest, to: .awaitingStepUp, .join),
        authorization(.awaitingStepUp, .getAuthorization, .identicalRequest, to: .awaitingStepUp, .join),
        authorization(.awaitingStepUp, .logout, to: .idle, .tokenRequestFailed),
        authorization(.awaitingStepUp, .storageChanged, .noValidStoredToken, to: .idle, .tokenRequestFailed),
        authorization(.awaitingStepUp, .storageChanged, .loggedOutElsewhere, to: .idle, .tokenRequestFailed),
        authorization(.awaitingStepUp, .setSelectedProvider, to: .idle, .tokenRequestFailed),
        authorization(.awaitingStepUp, .setRequestor, to: .idle, .tokenRequestFailed),
        authorization(.authorizing, .backendAnswered, .stepUpRequired, to: .awaitingStepUp, .stepUpRequired, .startTimer),
        authorization(.awaitingStepUp, .completeStepUp, .stepUpSucceeded, to: .authorizing, .cancelTimer, .authorize),
        authorization(.awaitingStepUp, .completeStepUp, .notAuthenticated, to: .idle, .cancelTimer, .tokenRequestFailed),
        // A step-up held in the store (a fleet): waited for, taken over, or ended by another instance.
        authorization(.idle, .getAuthorization, .stepUpPendingElsewhere, to: .awaitingStepUp, .startTimer),
        authorization(.idle, .checkAuthorization, .stepUpPendingElsewhere, to: .awaitingStepUp, .startTimer),
        authorization(.idle, .completeStepUp, .stepUpPendingElsewhere, to: .awaitingStepUp),
        authorization(.awaitingStepUp, .completeStepUp, .stepUpPendingElsewhere, to: .awaitingStepUp, .cancelTimer),
        authorization(.awaitingStepUp, .storageChanged, .stepUpCompletingElsewhere, to: .awaitingStepUp, .cancelTimer, .startTimer),
        authorization(.awaitingStepUp, .storageChanged, .stepUpPendingElsewhere, to: .awaitingStepUp, .cancelTimer, .startTimer),
        authorization(.askingProvider, .providerAnswered, .stepUpPendingElsewhere, to: .awaitingStepUp, .startTimer),
        authorization(.authorizing, .backendAnswered, .stepUpPendingElsewhere, to: .awaitingStepUp, .startTimer),
        authorization(.awaitingStepUp, .storageChanged, .stepUpGrantedElsewhere, to: .idle, .cancelTimer, .setToken),
        authorization(.askingProvider, .storageChanged, .stepUpGrantedElsewhere, to: .idle, .cancelTimer, .setToken),
        authorization(.awaitingStepUp, .storageChanged, .stepUpEndedElsewhere, to: .idle, .cancelTimer, .tokenRequestFailed),
        authorization(.askingProvider, .storageChanged, .stepUpEndedElsewhere, to: .idle, .tokenRequestFailed),
        authorization(.authorizing, .storageChanged, .stepUpEndedElsewhere, to: .idle, .tokenRequestFailed),
    ] }

    // MARK: - Accounts (providers the user signs in to)

    static let accountRows = accountTable()

    @_optimize(none) private static func accountTable() -> [TransitionRow] { [
        account(.signedOut, .signIn, to: .signingIn, .askProvider),
        account(.signedIn, .signIn, to: .signingIn, .askProvider),
        account(.signingIn, .signIn, .accountBusy, to: .signingIn, .status),
        account(.verifying, .signIn, .accountBusy, to: .verifying, .status),
        account(.renewing, .signIn, .accountBusy, to: .renewing, .status),
        account(.signingIn, .providerAnswered, .signedIn, to: .verifying, .askProvider),
        account(.signingIn, .providerAnswered, .providerFailed, to: .signedOut, .providerSignInStatus),
        account(.signingIn, .providerAnswered, .providerFailed, to: .signedIn, .providerSignInStatus),
        account(.verifying, .providerAnswered, .verified, to: .signedIn, .providerSignInStatus),
        account(.verifying, .providerAnswered, .verified, to: .signedIn, .providerSignInStatus, .startTimer),
        account(.verifying, .providerAnswered, .verificationFailed, to: .signedIn, .status, .providerSignInStatus),
        account(.verifying, .providerAnswered, .verificationFailed, to: .signedIn, .status, .providerSignInStatus, .startTimer),
        account(.verifying, .providerAnswered, .invalidToken, to: .renewing, .askProvider),
        account(.verifying, .providerAnswered, .invalidToken, to: .signedOut, .providerSignInStatus),
        account(.renewing, .providerAnswered, .renewed, to: .verifying, .askProvider),
        account(.renewing, .providerAnswered, .providerFailed, to: .signedOut, .providerSignInStatus),
        account(.renewing, .providerAnswered, .notSaved, to: .signedIn, .providerSignInStatus),
        account(.signedIn, .signOut, to: .signedOut, .providerSignInStatus, .askProvider),
        account(.signedOut, .signOut, to: .signedOut, .providerSignInStatus),
        account(.signedIn, .timerFired, .verificationDue, to: .verifying, .askProvider),
        account(.signedIn, .configurationLoaded, .verifyingProviders, to: .verifying, .askProvider),
        account(.signedOut, .configurationLoaded, .verifyingProviders, to: .verifying, .askProvider),
        // A provider the user does not sign in to holds no token: verified, it is where it was.
        account(.verifying, .providerAnswered, .verified, to: .signedOut, .providerSignInStatus),
        account(.verifying, .providerAnswered, .verified, to: .signedOut, .providerSignInStatus, .startTimer),
        account(.verifying, .providerAnswered, .verificationFailed, to: .signedOut, .status, .providerSignInStatus),
        account(.verifying, .providerAnswered, .verificationFailed, to: .signedOut, .status, .providerSignInStatus, .startTimer),
        account(.verifying, .setRequestor, to: .signedOut, .providerSignInStatus),
        account(.signedIn, .providerAnswered, .invalidToken, to: .renewing, .askProvider),
        account(.signedIn, .providerAnswered, .invalidToken, to: .signedOut, .providerSignInStatus),
        account(.signingIn, .signOut, to: .signedOut, .providerSignInStatus),
        account(.signingIn, .signOut, to: .signedOut, .providerSignInStatus, .askProvider),
        account(.verifying, .signOut, to: .signedOut, .providerSignInStatus, .askProvider),
        account(.renewing, .signOut, to: .signedOut, .providerSignInStatus, .askProvider),
        account(.signingIn, .setRequestor, to: .signedOut, .providerSignInStatus),
        account(.signingIn, .setRequestor, to: .signedIn, .providerSignInStatus),
        account(.verifying, .setRequestor, to: .signedIn, .providerSignInStatus),
        account(.renewing, .setRequestor, to: .signedIn, .providerSignInStatus),
        account(.signedOut, .storageChanged, .storedAccountSignedIn, to: .verifying, .askProvider),
        account(.signedIn, .storageChanged, .renewedElsewhere, to: .verifying, .askProvider),
        account(.signedIn, .storageChanged, .storedAccountSignedOut, to: .signedOut),
        account(.verifying, .storageChanged, .storedAccountSignedOut, to: .signedOut, .providerSignInStatus),
        account(.renewing, .storageChanged, .storedAccountSignedOut, to: .signedOut, .providerSignInStatus),
        // A token found invalid while another instance renews it (its mark in the store), or after it did.
        account(.signedIn, .providerAnswered, .renewingElsewhere, to: .signedIn, .startTimer),
        account(.signedIn, .timerFired, .renewingElsewhere, to: .signedIn, .startTimer),
        account(.verifying, .providerAnswered, .renewingElsewhere, to: .signedIn, .startTimer),
        account(.verifying, .providerAnswered, .renewingElsewhere, to: .awaitingRenewal, .startTimer),
        account(.verifying, .providerAnswered, .silentSignInRunning, to: .awaitingRenewal),
        account(.awaitingRenewal, .anyInput, .silentSignInEnded, to: .awaitingRenewal, .startTimer),
        account(.awaitingRenewal, .storageChanged, .renewedElsewhere, to: .verifying, .askProvider),
        account(.awaitingRenewal, .storageChanged, .storedAccountSignedOut, to: .signedOut, .providerSignInStatus),
        account(.awaitingRenewal, .timerFired, .renewingElsewhere, to: .awaitingRenewal, .startTimer),
        account(.awaitingRenewal, .timerFired, .invalidToken, to: .renewing, .askProvider),
        account(.awaitingRenewal, .timerFired, .invalidToken, to: .signedOut, .providerSignInStatus),
        account(.awaitingRenewal, .signIn, .accountBusy, to: .awaitingRenewal, .status),
        account(.awaitingRenewal, .signOut, to: .signedOut, .providerSignInStatus, .askProvider),
        account(.awaitingRenewal, .setRequestor, to: .signedIn, .providerSignInStatus),
        account(.awaitingRenewal, .renewalNotMarked, .notSaved, to: .signedIn, .providerSignInStatus),
        account(.signedIn, .timerFired, .invalidToken, to: .renewing, .askProvider),
        account(.signedIn, .timerFired, .invalidToken, to: .signedOut, .providerSignInStatus),
    ] }

    // MARK: - Entitlements

    static let entitlementsRows = entitlementsTable()

    @_optimize(none) private static func entitlementsTable() -> [TransitionRow] { [
        entitlements(.anyInput, .changed, .entitlementsChanged),
    ] }

    // MARK: - Typed row builders

    private static func account(
        _ from: EntitlementMachine.AccountKind, _ input: TransitionInput, _ condition: TransitionGuard? = nil,
        to: EntitlementMachine.AccountKind, _ actions: TransitionAction...
    ) -> TransitionRow {
        row(.accounts, from.rawValue, input, condition, to.rawValue, actions)
    }

    private static func entitlements(
        _ input: TransitionInput, _ condition: TransitionGuard, _ actions: TransitionAction...
    ) -> TransitionRow {
        row(.entitlements, EntitlementsWatch.watching.rawValue, input, condition, EntitlementsWatch.watching.rawValue, actions)
    }

    private static func configuration(
        _ from: ConfigurationState.Kind, _ input: TransitionInput, _ condition: TransitionGuard? = nil,
        to: ConfigurationState.Kind, _ actions: TransitionAction...
    ) -> TransitionRow {
        row(.configuration, from.rawValue, input, condition, to.rawValue, actions)
    }

    private static func authentication(
        _ from: AuthenticationState.Kind, _ input: TransitionInput, _ condition: TransitionGuard? = nil,
        to: AuthenticationState.Kind, _ actions: TransitionAction...
    ) -> TransitionRow {
        row(.authentication, from.rawValue, input, condition, to.rawValue, actions)
    }

    private static func authorization(
        _ from: AuthorizationRequest.Kind, _ input: TransitionInput, _ condition: TransitionGuard? = nil,
        to: AuthorizationRequest.Kind, _ actions: TransitionAction...
    ) -> TransitionRow {
        row(.authorization, from.rawValue, input, condition, to.rawValue, actions)
    }

    private static func call(
        _ from: PendingCallKind, _ input: TransitionInput, _ condition: TransitionGuard? = nil, to: PendingCallKind,
        _ actions: TransitionAction...
    ) -> TransitionRow {
        row(.calls, from.rawValue, input, condition, to.rawValue, actions)
    }

    private static func row(
        _ region: TransitionRow.Region, _ from: String, _ input: TransitionInput, _ condition: TransitionGuard?,
        _ to: String, _ actions: [TransitionAction]
    ) -> TransitionRow {
        TransitionRow(
            region: region, from: from, input: input.rawValue, condition: condition?.rawValue, to: to,
            actions: actions.map(\.rawValue))
    }
}
