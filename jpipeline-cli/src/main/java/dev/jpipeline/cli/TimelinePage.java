package dev.jpipeline.cli;

import dev.jpipeline.trace.StageOperation;
import dev.jpipeline.trace.TraceEvent;
import dev.jpipeline.trace.Tracer;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * A self-contained HTML page (no network access) that draws a traced run as a timeline: one lane per thread and
 * one per producer's copies, spans coloured by stage, waits drawn in grey with a red edge, the consumers'
 * computing time between wait and release in the stage's colour.
 */
final class TimelinePage {

    private TimelinePage() {
    }

    static void write(Path file, List<TraceEvent> events, int stages, String title) throws IOException {
        List<String> lanes = new ArrayList<>();
        StringBuilder data = new StringBuilder("[");
        java.util.Map<String, Long> waitEnd = new java.util.HashMap<>();
        for (TraceEvent e : events) {
            String lane = Tracer.lane(e);
            if (!lanes.contains(lane)) {
                lanes.add(lane);
            }
            int l = lanes.indexOf(lane);
            switch (e.operation()) {
                case ACQUIRE, WAIT -> span(data, l, "wait", e.startNanos(), e.durationNanos(), e.stage());
                case COPY -> span(data, l, "copy", e.startNanos(), e.durationNanos(), e.stage());
                case RELEASE -> {
                    Long end = waitEnd.remove(lane);
                    if (end != null) {
                        span(data, l, "compute", end, e.startNanos() - end, e.stage());
                    }
                }
                case COMMIT -> span(data, l, "commit", e.startNanos(), 0, e.stage());
            }
            if (e.operation() == StageOperation.WAIT) {
                waitEnd.put(lane, e.startNanos() + e.durationNanos());
            }
        }
        if (data.length() > 1) {
            data.setLength(data.length() - 1);
        }
        data.append(']');
        StringBuilder laneNames = new StringBuilder("[");
        for (String lane : lanes) {
            laneNames.append('"').append(lane.replace("\\", "\\\\").replace("\"", "\\\"")).append("\",");
        }
        if (laneNames.length() > 1) {
            laneNames.setLength(laneNames.length() - 1);
        }
        laneNames.append(']');
        String html = TEMPLATE.replace("%TITLE%", title.replace("<", "&lt;"))
            .replace("%LANES%", laneNames).replace("%SPANS%", data).replace("%STAGES%", String.valueOf(stages));
        Files.writeString(file, html, StandardCharsets.UTF_8);
    }

    private static void span(StringBuilder data, int lane, String kind, long start, long duration, int stage) {
        data.append(String.format(Locale.ROOT, "[%d,\"%s\",%.3f,%.3f,%d],", lane, kind, start / 1000.0,
            duration / 1000.0, stage));
    }

    private static final String TEMPLATE = """
        <!DOCTYPE html>
        <html><head><meta charset="utf-8"><title>jpipeline timeline: %TITLE%</title>
        <style>
          body { font: 13px sans-serif; margin: 12px; background: #fff; color: #222; }
          #legend span { display: inline-block; margin-right: 14px; }
          #legend i { display: inline-block; width: 12px; height: 12px; margin-right: 4px; vertical-align: -2px; }
          canvas { border: 1px solid #ccc; }
        </style></head>
        <body>
        <h3>jpipeline timeline: %TITLE%</h3>
        <div id="legend"></div>
        <canvas id="timeline" width="1400" height="400"></canvas>
        <script>
        const lanes = %LANES%;
        const spans = %SPANS%;   // [lane, kind, start us, duration us, stage]
        const stages = %STAGES%;
        const colour = s => `hsl(${(s * 360 / Math.max(1, stages)) | 0}, 70%, 55%)`;
        const legend = document.getElementById('legend');
        legend.innerHTML = '<span><i style="background:#bbb;border:1px solid #d33"></i>waiting</span>'
          + Array.from({length: stages}, (_, s) => `<span><i style="background:${colour(s)}"></i>stage ${s}</span>`).join('')
          + '<span>copies: lighter lanes; compute: between a consumer\\'s wait and release</span>';
        const canvas = document.getElementById('timeline');
        const laneHeight = 22, labelWidth = 230, marginTop = 20;
        canvas.height = marginTop + lanes.length * laneHeight + 30;
        const g = canvas.getContext('2d');
        const end = spans.reduce((m, s) => Math.max(m, s[2] + s[3]), 1);
        const x = t => labelWidth + (t / end) * (canvas.width - labelWidth - 10);
        g.fillStyle = '#fff'; g.fillRect(0, 0, canvas.width, canvas.height);
        lanes.forEach((name, i) => {
          g.fillStyle = i % 2 ? '#f4f4f4' : '#fafafa';
          g.fillRect(labelWidth, marginTop + i * laneHeight, canvas.width - labelWidth, laneHeight);
          g.fillStyle = '#222'; g.fillText(name, 4, marginTop + i * laneHeight + 15);
        });
        for (const [lane, kind, start, dur, stage] of spans) {
          const y = marginTop + lane * laneHeight + 3, h = laneHeight - 6;
          const w = Math.max(1, x(start + dur) - x(start));
          if (kind === 'wait') {
            g.fillStyle = '#bbb'; g.fillRect(x(start), y, w, h);
            g.fillStyle = '#d33'; g.fillRect(x(start), y, Math.min(w, 2), h);
          } else if (kind === 'commit') {
            g.fillStyle = '#000'; g.fillRect(x(start), y, 1, h);
          } else {
            g.globalAlpha = kind === 'copy' ? 0.6 : 1;
            g.fillStyle = colour(stage); g.fillRect(x(start), y, w, h);
            g.globalAlpha = 1;
          }
        }
        g.fillStyle = '#222';
        g.fillText('0 ms', labelWidth, canvas.height - 8);
        g.fillText((end / 1000).toFixed(1) + ' ms', canvas.width - 70, canvas.height - 8);
        </script>
        </body></html>
        """;
}
