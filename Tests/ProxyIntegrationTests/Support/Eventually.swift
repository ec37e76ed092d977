import Foundation

/// Waits until `condition` holds, polling every 10 ms, at most `seconds` (a generous
/// deadline: the condition is the event, the deadline only ends a test that would hang).
@discardableResult
func eventually(within seconds: Double = 30, _ condition: () -> Bool) -> Bool {
    let deadline = Date().addingTimeInterval(seconds)
    while !condition() {
        if Date() > deadline { return false }
        Thread.sleep(forTimeInterval: 0.01)
    }
    return true
}
