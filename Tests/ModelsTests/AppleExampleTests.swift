import AppleExampleLogic
import Foundation
import Models
import Testing

/// The Apple example's logic (Examples/AppleApp) driven as its views drive it: touch events into `DrawingPad`,
/// Core Motion's fields into `LiveMotion`.
@Suite("The Apple example's app logic")
struct AppleExampleTests {
    /// A square drawn with a finger as one stroke of small moves, in a view's points (y down).
    @Test func aSquareDrawnOnThePadIsASquare() throws {
        var pad = DrawingPad(recognizer: try .shipped())
        #expect(pad.caption == "Draw a circle, triangle, square or star")
        let corners = [CGPoint(x: 40, y: 40), CGPoint(x: 240, y: 44), CGPoint(x: 236, y: 240), CGPoint(x: 42, y: 236)]
        pad.began(at: corners[0])
        for (from, to) in zip(corners, corners.dropFirst() + [corners[0]]) {
            for step in 1...25 {
                let t = CGFloat(step) / 25
                pad.moved(to: CGPoint(x: from.x + (to.x - from.x) * t, y: from.y + (to.y - from.y) * t))
            }
        }
        pad.ended(at: corners[0])
        let answer = try #require(pad.answer)
        #expect(answer.verdict == .recognized("square"), "\(answer)")
        #expect(pad.caption.hasPrefix("square, "), "\(pad.caption)")
        pad.clear()
        #expect(pad.strokes.isEmpty && pad.answer == nil)
    }

    /// A tap is one point: no answer, and the recognizer's reason as the caption.
    @Test func aTapIsAReasonNotAGuess() throws {
        var pad = DrawingPad(recognizer: try .shipped())
        pad.began(at: CGPoint(x: 10, y: 10))
        pad.ended(at: CGPoint(x: 10.2, y: 10.1))
        #expect(pad.answer == nil)
        let problem = try #require(pad.problem)
        #expect(pad.caption == problem && !problem.isEmpty)
    }

    /// 20 s of a pocket that bobs at a walk's pace, then 12 s on a table: walking, then still.
    @Test func liveMotionFollowsAWalkThenATable() throws {
        var motion = LiveMotion(recognizer: try .shipped())
        #expect(motion.state == nil)
        for tick in 0..<1000 {
            let time = Double(tick) / 50, phase = 2 * Double.pi * time
            motion.append(
                time: time, gravity: (0, -1, 0), userAcceleration: (0.1 * sin(phase), 0.25 * sin(2 * phase) + 0.12 * sin(phase + 0.5), 0))
        }
        #expect(motion.state == "walking")
        for tick in 1000..<1600 {
            motion.append(time: Double(tick) / 50, gravity: (0, 0, -1), userAcceleration: (0, 0, 0))
        }
        #expect(motion.state == "still")
        #expect(motion.problem == nil)
        // A sample from the past stops the stream with the reason; later samples change nothing.
        motion.append(time: 1, gravity: (0, 0, -1), userAcceleration: (0, 0, 0))
        let problem = try #require(motion.problem)
        motion.append(time: 40, gravity: (0, -1, 0), userAcceleration: (0.5, 0, 0))
        #expect(motion.problem == problem && motion.state == "still")
    }
}
