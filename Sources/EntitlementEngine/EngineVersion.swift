/// The engine's semantic version: the one number `entitle --version` prints, every trace header
/// carries and the article *Changes* starts with (a test holds them together).
public enum EngineVersion {
    /// The current version.
    public static let current = "0.23.0"
}
