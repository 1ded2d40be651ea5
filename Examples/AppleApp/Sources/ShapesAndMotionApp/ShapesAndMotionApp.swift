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

/// Touches → `DrawingPad` → `ShapeRecognizer.recognize(strokes:)`; the answer shows under the pad.
struct DrawView: View {
    @State private var pad: DrawingPad? = try? DrawingPad(recognizer: .shipped())

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
                        if drag.translation == .zero { pad?.began(at: drag.location) } else { pad?.moved(to: drag.location) }
                    }
                    .onEnded { drag in pad?.ended(at: drag.location) }
            )
            Text(pad?.caption ?? "The shape model could not be loaded").font(.title2)
            Button("Clear") { pad?.clear() }
        }
        .padding()
    }
}

#if os(iOS)
/// Core Motion's device motion at 50 Hz → `LiveMotion` (a `MotionStream`) → the confirmed state.
struct MotionView: View {
    @State private var motion: LiveMotion? = try? LiveMotion(recognizer: .shipped())
    @State private var manager = CMMotionManager()

    var body: some View {
        VStack(spacing: 12) {
            Text(motion?.state ?? "…").font(.largeTitle)
            if let window = motion?.lastWindow {
                Text("last window: \(window.label), \(Int((window.confidence * 100).rounded()))%")
            }
            if let problem = motion?.problem { Text(problem).foregroundStyle(.red) }
        }
        .onAppear {
            guard manager.isDeviceMotionAvailable else { return }
            manager.deviceMotionUpdateInterval = 1.0 / 50
            manager.startDeviceMotionUpdates(to: .main) { sample, _ in
                if let sample { motion?.append(sample) }
            }
        }
        .onDisappear { manager.stopDeviceMotionUpdates() }
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
