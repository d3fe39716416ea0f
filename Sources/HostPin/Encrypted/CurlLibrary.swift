import CCurl

/// Process-wide libcurl set-up for the encrypted transports.
enum CurlLibrary {
    /// `curl_global_init` once per process, before the first handle. Other users of the same libcurl in
    /// the process (FoundationNetworking, HostPinURL) initialise it too: the call is reference-counted
    /// and, since curl 7.84, thread-safe.
    static func initialiseOnce() { _ = initialised }
    private static let initialised: CURLcode = curl_global_init(Int(CURL_GLOBAL_DEFAULT))

    /// The CA directory libcurl was built with (Debian: /etc/ssl/certs), so an extra CA file is trusted
    /// in addition to the system's CAs rather than instead of them.
    static let defaultCAPath: String? = {
        guard let info = curl_version_info(HOSTPIN_CURLVERSION_NOW), let path = info.pointee.capath else { return nil }
        return String(cString: path)
    }()
}
