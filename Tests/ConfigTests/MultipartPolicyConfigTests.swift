import Config
import MultipartParsing
import ProxyCore
import Testing

/// `multipart: { anomalies: { FLAG: accept | reject }, keep_part_headers: [...] }`.
@Suite struct MultipartPolicyConfigTests {
    func route(_ multipart: String) -> String {
        "routes:\n  - match: { path: /upload }\n    multipart:\n" + multipart
    }

    @Test func policyIsCompiledIntoTheRoute() throws {
        let text = route(
            """
                  anomalies: { data_after: reject, lf_line_endings: reject, extra_part_header: accept }
                  keep_part_headers: [X-Checksum, content-transfer-encoding]

            """)
        let config = try ConfigLoader.load(text: text, file: "p.yaml").get()
        let policy = try #require(config.routes.first?.rules.policy)
        #expect(policy.rejected == [.dataAfter, .lfLineEndings])
        #expect(policy.keptHeaders == ["X-Checksum", "content-transfer-encoding"])
        #expect(policy.keeps(Array("x-checksum".utf8)))
        #expect(!policy.keeps(Array("X-Other".utf8)))
    }

    @Test func defaultAcceptsEveryFlagAndKeepsNothing() throws {
        let config = try ConfigLoader.load(text: route("      drop_fields: [token]\n"), file: "p.yaml").get()
        #expect(config.routes.first?.rules.policy == MultipartPolicy())
    }

    @Test func everyFlagNameIsAccepted() throws {
        let entries = MultipartAnomalies.allNames.map { "        \($0): reject" }.joined(separator: "\n")
        let config = try ConfigLoader.load(text: route("      anomalies:\n\(entries)\n"), file: "p.yaml")
            .get()
        let all = MultipartAnomalies.allNames.reduce(into: MultipartAnomalies()) {
            $0.insert(.init(name: $1)!)
        }
        #expect(config.routes.first?.rules.policy.rejected == all)
    }

    @Test func mistakesAreReportedWithTheirPlace() {
        let text = route(
            """
                  anomalies: { data_afterr: reject, lf_line_endings: refuse }
                  keep_part_headers: [Content-Type, "X Bad", X-A, x-a, Content-Disposition]

            """)
        guard case .failure(let errors) = ConfigLoader.load(text: text, file: "p.yaml") else {
            Issue.record("a bad policy loaded")
            return
        }
        let lines = errors.errors.map(\.description)
        #expect(lines.count == 6, "\(lines)")
        #expect(
            lines.contains {
                $0.hasPrefix("p.yaml:4:20: routes[0].multipart.anomalies.data_afterr: unknown anomaly flag")
            })
        #expect(
            lines.contains { $0.contains("extra_part_header") && $0.contains("comma_separated_parameters") })
        #expect(
            lines.contains(
                "p.yaml:4:58: routes[0].multipart.anomalies.lf_line_endings: expected accept or reject, found 'refuse'"
            ))
        #expect(
            lines.contains(
                "p.yaml:5:27: routes[0].multipart.keep_part_headers[0]: Content-Type is always forwarded (FormGate writes it)"
            ))
        #expect(
            lines.contains(
                "p.yaml:5:41: routes[0].multipart.keep_part_headers[1]: 'X Bad' is not a header name"))
        #expect(lines.contains("p.yaml:5:55: routes[0].multipart.keep_part_headers[3]: x-a is listed twice"))
        #expect(
            lines.contains { $0.contains("keep_part_headers[4]: Content-Disposition is always forwarded") })
    }

    @Test func aListIsRequired() {
        let text = route("      keep_part_headers: X-Checksum\n      anomalies: [data_after]\n")
        guard case .failure(let errors) = ConfigLoader.load(text: text, file: "p.yaml") else {
            Issue.record("a bad policy loaded")
            return
        }
        #expect(
            errors.errors.map(\.keyPath) == [
                "routes[0].multipart.keep_part_headers", "routes[0].multipart.anomalies",
            ])
    }
}
