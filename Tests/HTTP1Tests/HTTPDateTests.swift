import HTTP1
import Testing

@Suite struct HTTPDateTests {
    /// Reference values from RFC 9110 §5.6.7 and `date -u -d @SECONDS '+%a, %d %b %Y %T GMT'`.
    static let known: [(Int64, String)] = [
        (0, "Thu, 01 Jan 1970 00:00:00 GMT"),
        (784_111_777, "Sun, 06 Nov 1994 08:49:37 GMT"),
        (951_782_400, "Tue, 29 Feb 2000 00:00:00 GMT"),
        (1_709_251_199, "Thu, 29 Feb 2024 23:59:59 GMT"),
        (1_798_761_600, "Fri, 01 Jan 2027 00:00:00 GMT"),
        (4_107_542_400, "Mon, 01 Mar 2100 00:00:00 GMT"),
        (253_402_300_799, "Fri, 31 Dec 9999 23:59:59 GMT"),
    ]

    @Test(arguments: known)
    func formatsIMFFixdate(_ seconds: Int64, _ expected: String) {
        #expect(String(decoding: HTTPDate.format(unixSeconds: seconds), as: UTF8.self) == expected)
    }

    /// Every day from 1970 to 2200 follows the one before: weekday, day, month and year step
    /// the way a calendar does.
    @Test func consecutiveDaysStepLikeACalendar() {
        let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
        let weekdays = ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"]
        var (year, month, day, weekday) = (1970, 1, 1, 3)
        for days in Int64(0)..<Int64(84_000) {
            let text = String(decoding: HTTPDate.format(unixSeconds: days * 86_400 + 43_210), as: UTF8.self)
            let expected =
                "\(weekdays[weekday]), \(day < 10 ? "0" : "")\(day) \(months[month - 1]) \(year) 12:00:10 GMT"
            guard text == expected else {
                Issue.record("day \(days): \(text), expected \(expected)")
                return
            }
            let leap = year % 4 == 0 && (year % 100 != 0 || year % 400 == 0)
            let length = [31, leap ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][month - 1]
            weekday = (weekday + 1) % 7
            day += 1
            if day > length {
                (day, month) = (1, month + 1)
                if month > 12 { (month, year) = (1, year + 1) }
            }
        }
    }

    @Test func cachesPerSecond() {
        var date = HTTPDate()
        let first = date.value(at: 784_111_777)
        #expect(date.value(at: 784_111_777) == first)
        #expect(
            String(decoding: date.value(at: 784_111_778), as: UTF8.self) == "Sun, 06 Nov 1994 08:49:38 GMT")
    }
}
