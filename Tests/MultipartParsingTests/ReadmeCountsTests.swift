import Foundation
import Testing

/// The README's corpus figures are the manifest's: a test rather than a hand-kept number.
@Suite struct ReadmeCountsTests {
    /// README.md's text with line breaks and indentation folded to single spaces.
    static func readme() throws -> String {
        let url = CorpusCase.root.deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
            .appendingPathComponent("README.md")
        let text = try String(contentsOf: url, encoding: .utf8)
        return text.split(whereSeparator: \.isWhitespace).joined(separator: " ")
    }

    /// The number just before `phrase` in the README (nil when the phrase is missing).
    static func number(before phrase: String, in text: String) -> Int? {
        guard let range = text.range(of: phrase) else { return nil }
        let digits = text[..<range.lowerBound].reversed().drop { $0 == " " }.prefix {
            $0.isNumber || $0 == ","
        }
        return Int(String(digits.reversed()).replacingOccurrences(of: ",", with: ""))
    }

    @Test func corpusCountsMatchTheManifest() throws {
        let text = try Self.readme()
        let cases = CorpusCase.all
        #expect(Self.number(before: "bodies from werkzeug", in: text) == cases.count)
        #expect(
            Self.number(before: "valid bodies parse to their expected", in: text)
                == cases.filter { $0.verdict == "accept" }.count)
        #expect(
            Self.number(before: "invalid ones are refused", in: text)
                == cases.filter { $0.sourceVerdict == "invalid" && $0.verdict == "refuse" }.count)
        #expect(
            Self.number(before: "that their source accepts are refused by policy", in: text)
                == cases.filter { $0.sourceVerdict == "valid" && $0.verdict == "refuse" }.count)
    }

    @Test func hostileCountsMatchTheManifest() throws {
        struct Case: Decodable { var upstream: String }
        struct Manifest: Decodable { var cases: [Case] }
        let url = CorpusCase.root.deletingLastPathComponent().appendingPathComponent("hostile/manifest.json")
        let cases = try JSONDecoder().decode(Manifest.self, from: Data(contentsOf: url)).cases
        let refused = cases.filter { $0.upstream == "nothing" || $0.upstream == "incomplete" }.count
        let text = try Self.readme()
        #expect(Self.number(before: "requests in nine families", in: text) == cases.count)
        #expect(Self.number(before: "refused ones must reach the upstream", in: text) == refused)
        #expect(Self.number(before: "accepted ones must arrive", in: text) == cases.count - refused)
    }
}
