// The SwiftUI app: a pad to draw on and the phone's motion state. Only where SwiftUI exists (iOS, macOS); on
// Linux this target builds a short text demo of the same logic instead, so `swift run` works there too.
import Models
import ShapesAndMotion

#if canImport(SwiftUI)
import SwiftUI

#if canImport(CoreMotion)
import CoreMotion
#endif

@main
struct ShapesAndMotionApp: App {
    var body: some Scene {
        WindowGroup {
            TabView {
                DrawView().tabItem { Label("Draw", systemImage: "scribble") }
                #if os(iOS)
                MotionView().tabItem { Label("Motion", systemImage: "figure.walk") }
                #endif
            }
        }
    }
}

/// Touches → `DrawingPad` → `ShapeRecognizer.recognize(strokes:)`; the answer shows under the pad. The pad (and
/// its model) is made once, when the view first appears.
struct DrawView: View {
    @State private var pad: DrawingPad?
    @State private var loadProblem: String?
    /// Whether a finger is down: the first event of a drag starts a stroke, the others extend it.
    @State private var touching = false

    var body: some View {
        VStack(spacing: 12) {
            Canvas { context, _ in
                for stroke in pad?.strokes ?? [] {
                    var path = Path()
                    path.addLines(stroke)
                    context.stroke(path, with: .color(.primary), style: StrokeStyle(lineWidth: 4, lineCap: .round, lineJoin: .round))
                }
            }
            .background(Color.gray.opacity(0.1))
            .gesture(
                DragGesture(minimumDistance: 0)
                    .onChanged { drag in
                        if touching {
                            pad?.moved(to: drag.location)
                        } else {
                            touching = true
                            pad?.began(at: drag.location)
                        }
                    }
                    .onEnded { drag in
                        touching = false
                        pad?.ended(at: drag.location)
                    }
            )
            Text(pad?.caption ?? loadProblem ?? "Loading the shape model…").font(.title2)
            Button("Clear") { pad?.clear() }
        }
        .padding()
        .task {
            guard pad == nil else { return }
            do {
                pad = DrawingPad(recognizer: try .shipped())
            } catch {
                loadProblem = "The shape model could not be loaded: \(error)"
            }
        }
    }
}

#if os(iOS)
/// The phone's motion: one `CMMotionManager` (Apple asks for one an app), made when the view first appears, its
/// device motion at 50 Hz going to a `LiveMotion` (a `MotionStream`) on the main queue.
@MainActor
@Observable
final class MotionFeed {
    var motion: LiveMotion?
    var loadProblem: String?
    private let manager = CMMotionManager()

    func start() {
        if motion == nil {
            do {
                motion = LiveMotion(recognizer: try .shipped())
            } catch {
                loadProblem = "The motion model could not be loaded: \(error)"
                return
            }
        }
        guard manager.isDeviceMotionAvailable, !manager.isDeviceMotionActive else { return }
        manager.deviceMotionUpdateInterval = 1.0 / 50
        manager.startDeviceMotionUpdates(to: .main) { [weak self] sample, _ in
            guard let sample else { return }
            MainActor.assumeIsolated { self?.motion?.append(sample) }
        }
    }

    func stop() { manager.stopDeviceMotionUpdates() }
}

/// The confirmed state, the last window's answer, and why samples were refused if they were.
struct MotionView: View {
    @State private var feed: MotionFeed?

    var body: some View {
        VStack(spacing: 12) {
            Text(feed?.motion?.state ?? "…").font(.largeTitle)
            if let window = feed?.motion?.lastWindow {
                Text("last window: \(window.label), \(Int((window.confidence * 100).rounded()))%")
            }
            if let problem = feed?.motion?.problem ?? feed?.loadProblem { Text(problem).foregroundStyle(.red) }
        }
        .onAppear {
            let feed = self.feed ?? MotionFeed()
            self.feed = feed
            feed.start()
        }
        .onDisappear { feed?.stop() }
    }
}
#endif

#else
import Foundation

/// Without SwiftUI (Linux): the app's logic on made-up input, as the views would drive it.
@main
enum ShapesAndMotionDemo {
    static func main() throws {
        var pad = DrawingPad(recognizer: try .shipped())
        let corners = [CGPoint(x: 20, y: 20), CGPoint(x: 220, y: 20), CGPoint(x: 220, y: 220), CGPoint(x: 20, y: 220)]
        pad.began(at: corners[0])
        for (from, to) in zip(corners, corners.dropFirst() + [corners[0]]) {
            for step in 1...20 {
                let t = CGFloat(step) / 20
                pad.moved(to: CGPoint(x: from.x + (to.x - from.x) * t, y: from.y + (to.y - from.y) * t))
            }
        }
        pad.ended(at: corners[0])
        print("pad: \(pad.caption)")

        var motion = LiveMotion(recognizer: try .shipped())
        // 20 s of a phone in a trouser pocket that bobs twice a stride, at a stride a second (made up).
        for tick in 0..<1000 {
            let time = Double(tick) / 50, phase = 2 * Double.pi * time
            motion.append(
                time: time, gravity: (0, -1, 0), userAcceleration: (0.1 * sin(phase), 0.25 * sin(2 * phase) + 0.12 * sin(phase + 0.5), 0))
        }
        print("motion: \(motion.state ?? "no state yet")")
    }
}
#endif
