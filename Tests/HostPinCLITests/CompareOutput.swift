/// What `compare` tests compare its output with.
enum CompareOutput {
    /// `text` with the wildcard probe's random label (`hostpin-` and 16 letters and digits) written as
    /// `hostpin-RANDOM`, so a whole output can be compared exactly.
    static func normalised(_ text: String) -> String {
        text.replacing(/hostpin-[a-z0-9]{16}\./, with: "hostpin-RANDOM.")
    }
}
