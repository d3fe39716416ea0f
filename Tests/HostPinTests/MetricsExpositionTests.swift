@testable import HostPin
import Testing

/// The Prometheus text format 0.0.4 as HostPin writes it: lines, escaping, numbers, histograms.
@Suite struct MetricsExpositionTests {
    @Test func familiesAndSamplesAreLinesOfTheFormat() {
        var exposition = MetricsExposition()
        exposition.family("hostpin_test_total", .counter, help: "A test counter.")
        exposition.sample("hostpin_test_total", labels: [("kind", "a"), ("code", "200")], UInt64(3))
        exposition.sample("hostpin_test_total", 7)
        #expect(exposition.text == """
            # HELP hostpin_test_total A test counter.
            # TYPE hostpin_test_total counter
            hostpin_test_total{kind="a",code="200"} 3
            hostpin_test_total 7

            """)
    }

    @Test func labelValuesAndHelpAreEscaped() {
        #expect(MetricsExposition.escapedLabelValue(#"a"b\c"# + "\nd\r\ne") == #"a\"b\\c\nd"# + "\r" + #"\ne"#)
        #expect(MetricsExposition.escapedLabelValue("https://dns.example.test/dns-query") == "https://dns.example.test/dns-query")
        #expect(MetricsExposition.escapedHelp(#"say "\" and"# + "\nmore") == #"say "\\" and\nmore"#)
    }

    @Test func numbersAreWrittenAsPrometheusClientsWriteThem() {
        #expect(MetricsExposition.format(1) == "1")
        #expect(MetricsExposition.format(10) == "10")
        #expect(MetricsExposition.format(0) == "0")
        #expect(MetricsExposition.format(0.0005) == "0.0005")
        #expect(MetricsExposition.format(2.5) == "2.5")
        #expect(MetricsExposition.format(.infinity) == "+Inf")
        #expect(MetricsExposition.format(-.infinity) == "-Inf")
        #expect(MetricsExposition.format(.nan) == "NaN")
    }

    @Test func histogramBucketsAreCumulativeAndTheCountIsTheirTotal() {
        var exposition = MetricsExposition()
        exposition.histogram("rtt_seconds", [("upstream", "u")], bounds: [0.5, 1], counts: [2, 0, 3], sum: 4.25)
        #expect(exposition.text == """
            rtt_seconds_bucket{upstream="u",le="0.5"} 2
            rtt_seconds_bucket{upstream="u",le="1"} 2
            rtt_seconds_bucket{upstream="u",le="+Inf"} 5
            rtt_seconds_sum{upstream="u"} 4.25
            rtt_seconds_count{upstream="u"} 5

            """)
    }

    @Test func anUpstreamListedTwiceGetsDistinctLabels() throws {
        let upstream = try #require(Upstream("127.0.0.1:5300"))
        let other = try #require(Upstream("127.0.0.1:5301"))
        #expect(UpstreamMetrics.labelValues([upstream, other, upstream]) == ["127.0.0.1:5300", "127.0.0.1:5301", "127.0.0.1:5300 #2"])
    }
}
