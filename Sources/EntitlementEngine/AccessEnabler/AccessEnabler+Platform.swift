/// The platform's picker and sign-in check, asked as tasks whose answers come back as inputs.
extension AccessEnabler {
    func startPickerTask(_ flow: FlowID, _ dialog: TvProviderDialog, requestorID: String, request: V2PartnerRequest) {
        startPlatformTask(.picker(flow)) { platform in
            // The machine only asks when a port was given; without one the picker counts as cancelled.
            .platformPickerAnswered(
                flow, await platform?.pickProvider(dialog, requestorID: requestorID, request: request) ?? .cancelled)
        }
    }

    /// Runs one question to the platform as a task whose answer comes back as an input.
    func startPlatformTask(
        _ work: PlatformWork, _ ask: @escaping @Sendable ((any PlatformSSO)?) async -> Input
    ) {
        let platform = self.platform
        state.platformWork[work] = environment.startTask {
            let answer = await ask(platform)
            await self.platformAnswered(work, answer)
        }
    }

    func platformAnswered(_ work: PlatformWork, _ answer: Input) async {
        // A dismissed picker's answer is dropped here: the machine already ended its flow.
        guard state.platformWork.removeValue(forKey: work) != nil else { return }
        await enqueueAndWait(.input(answer))
        resumeIdleWaitersIfIdle()
    }
}
