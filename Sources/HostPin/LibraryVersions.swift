import CAres
import CCurl
import CLDNS

/// The versions of the C libraries HostPin runs with, as each library reports its own at run time (not
/// the headers it was built against): what `hostpin --version` prints, so that a report names the
/// c-ares, ldns and libcurl actually loaded (Debian upgrades them under a built binary).
public enum LibraryVersions {
    /// c-ares's `ares_version(NULL)`, e.g. `1.34.5`.
    public static var cAres: String { String(cString: ares_version(nil)) }
    /// ldns's `ldns_version()`, e.g. `1.8.4`.
    public static var ldns: String { String(cString: ldns_version()) }
    /// libcurl's `curl_version_info(CURLVERSION_NOW)->version`, e.g. `8.14.1`; `unknown` if it gives none.
    public static var libcurl: String {
        guard let info = curl_version_info(HOSTPIN_CURLVERSION_NOW), let version = info.pointee.version else { return "unknown" }
        return String(cString: version)
    }
}
