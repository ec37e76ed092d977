import HTTPCore
import Testing

@Suite struct JSONLineTests {
    @Test func membersArraysAndObjects() {
        var line = JSONLine(capacity: 8)
        line.key("id")
        line.string("a\"b\\c\n\u{1}é")
        line.key("n")
        line.integer(-1_234_567_890_123 as Int64)
        line.key("none")
        line.integer(nil as Int?)
        line.key("list")
        line.beginArray()
        line.string("x")
        line.beginObject()
        line.key("ok")
        line.bool(true)
        line.key(escaping: "sha\"256")
        line.string(nil as String?)
        line.endObject()
        line.integer(0)
        line.endArray()
        line.key("empty")
        line.beginArray()
        line.endArray()
        let text = String(decoding: line.finish(), as: UTF8.self)
        #expect(
            text
                == #"{"id":"a\"b\\c\n\u0001é","n":-1234567890123,"none":null,"list":["x",{"ok":true,"sha\"256":null},0],"empty":[]}"#
        )
    }

    /// Strings are escaped exactly as `jsonString(_:)` escapes them.
    @Test func stringsMatchJSONString() {
        let seed: UInt64 = 0x750A
        var generator = SplitMix64(seed: seed)
        let alphabet: [Character] = ["a", "\"", "\\", "\n", "\r", "\t", "\u{0}", "\u{1F}", "é", "☀", " "]
        for _ in 0..<500 {
            let text = String(
                (0..<Int.random(in: 0...12, using: &generator)).map { _ in
                    alphabet.randomElement(using: &generator)!
                })
            var line = JSONLine()
            line.key("v")
            line.string(text)
            #expect(
                String(decoding: line.finish(), as: UTF8.self) == "{\"v\":\(jsonString(text))}",
                "\(text.debugDescription), seed \(seed)")
        }
    }

    @Test(arguments: [
        (Int64(0), "1970-01-01T00:00:00.000Z"),
        (Int64(1_796_079_540_123), "2026-11-30T22:59:00.123Z"),
        (Int64(951_782_400_007), "2000-02-29T00:00:00.007Z"),
        (Int64(-1), "1969-12-31T23:59:59.999Z"),
    ])
    func timestamps(milliseconds: Int64, expected: String) {
        var line = JSONLine()
        line.key("t")
        line.timestamp(unixMilliseconds: milliseconds)
        #expect(String(decoding: line.finish(), as: UTF8.self) == "{\"t\":\"\(expected)\"}")
    }
}
