import Foundation
import Models

/// What a finger drew on the pad, stroke by stroke, and what the shape recognizer says of it.
///
/// Touch events go in as a view delivers them (`began`, `moved`, `ended`, in the view's points); `answer` is the
/// recognizer's, once a stroke ends. A drawing the recognizer cannot see (one dot) answers `nil` and keeps the
/// reason in `problem`, so the view shows "draw more" instead of a guess.
public struct DrawingPad: Sendable {
    /// The finished strokes and the one being drawn, in the view's coordinates.
    public private(set) var strokes: [[CGPoint]] = []
    /// The answer for the strokes so far, after the last stroke ended.
    public private(set) var answer: ShapeAnswer?
    /// Why there is no answer, when the recognizer refused the drawing (one point, say).
    public private(set) var problem: String?

    private let recognizer: ShapeRecognizer

    /// A pad that answers with `recognizer` (the shipped model by default).
    public init(recognizer: ShapeRecognizer) {
        self.recognizer = recognizer
    }

    /// A finger touched down: a new stroke starts.
    public mutating func began(at point: CGPoint) {
        strokes.append([point])
    }

    /// The finger moved: the stroke goes on. Points closer than half a point to the last are dropped.
    public mutating func moved(to point: CGPoint) {
        guard let last = strokes.last?.last else { return began(at: point) }
        guard hypot(point.x - last.x, point.y - last.y) >= 0.5 else { return }
        strokes[strokes.count - 1].append(point)
    }

    /// The finger lifted: the drawing so far is recognized.
    public mutating func ended(at point: CGPoint) {
        moved(to: point)
        recognize()
    }

    /// Clears the pad for a new drawing.
    public mutating func clear() {
        strokes = []
        answer = nil
        problem = nil
    }

    /// One line for the view: the shape and confidence, "not sure", or why there is no answer.
    public var caption: String {
        if let problem { return problem }
        guard let answer else { return "Draw a circle, triangle, square or star" }
        switch answer.verdict {
        case .recognized(let shape): return "\(shape), \(Int((answer.confidence * 100).rounded()))%"
        case .unknown: return "none of the shapes"
        case .notSure(let first, let second): return "not sure: \(first) or \(second)"
        }
    }

    private mutating func recognize() {
        do {
            answer = try recognizer.recognize(strokes: strokes.map { $0.map { (x: Double($0.x), y: Double($0.y)) } })
            problem = nil
        } catch {
            answer = nil
            problem = error.message
        }
    }
}
