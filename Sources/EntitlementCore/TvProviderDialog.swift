/// The platform provider picker handed to `presentTvProviderDialog` / `dismissTvProviderDialog`
/// (cookbook D/E). On Linux there is no view controller; the dialog is identified by id.
public struct TvProviderDialog: Sendable, Hashable, Codable {
    /// Identifies one presentation of the picker.
    public var id: String
    /// The MVPDs the picker offers.
    public var mvpds: [MVPD]

    /// Creates a picker description.
    package init(id: String, mvpds: [MVPD]) {
        self.id = id
        self.mvpds = mvpds
    }
}
