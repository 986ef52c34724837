package dev.jpipeline.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.awt.image.BufferedImage;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import javax.imageio.ImageIO;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** The timeline page renders in headless Chromium and draws every lane. */
@Timeout(180)
class TimelinePageTest {

    private static Path chromium() {
        for (String candidate : new String[] {"/usr/bin/chromium", "/usr/bin/chromium-browser", "/usr/bin/google-chrome"}) {
            if (Files.isExecutable(Path.of(candidate))) {
                return Path.of(candidate);
            }
        }
        return null;
    }

    @Test
    void theTimelineDrawsItsLanes(@TempDir Path dir) throws Exception {
        Path page = dir.resolve("timeline.html");
        String[] out = Cli.run("stream", "--synthetic", "16m", "--stages", "3", "--producers", "2",
            "--consumers", "2", "--timeline", page.toString());
        assertEquals("0", out[0], out[2]);
        String html = Files.readString(page);
        assertTrue(html.contains("<canvas") && !html.contains("http://") && !html.contains("https://"),
            "self-contained");
        Path browser = chromium();
        Assumptions.assumeTrue(browser != null, "no Chromium on this machine (.ci/run installs it)");
        Path png = dir.resolve("timeline.png");
        Process p = new ProcessBuilder(browser.toString(), "--headless", "--no-sandbox", "--disable-gpu",
            "--disable-quic", "--no-first-run", "--disable-background-networking", "--disable-component-update",
            "--disable-sync", "--user-data-dir=" + dir.resolve("profile"), "--window-size=1450,400",
            "--screenshot=" + png, page.toUri().toString())
            .redirectErrorStream(true).redirectOutput(dir.resolve("chromium.log").toFile()).start();
        assertTrue(p.waitFor(120, TimeUnit.SECONDS), "chromium did not finish");
        BufferedImage image = ImageIO.read(png.toFile());
        int colouredRows = 0;
        for (int y = 0; y < image.getHeight(); y++) {
            int coloured = 0;
            for (int x = 240; x < image.getWidth(); x++) {
                int rgb = image.getRGB(x, y);
                int r = (rgb >> 16) & 0xFF;
                int g = (rgb >> 8) & 0xFF;
                int b = rgb & 0xFF;
                if (Math.max(r, Math.max(g, b)) - Math.min(r, Math.min(g, b)) > 60) {
                    coloured++;
                }
            }
            if (coloured >= 2) {
                colouredRows++;
            }
        }
        // 6 lanes (4 threads, 2 copy lanes) of 16-pixel bars, each with coloured spans or wait edges
        assertTrue(colouredRows >= 6 * 10, "rows with coloured spans: " + colouredRows);
    }
}
