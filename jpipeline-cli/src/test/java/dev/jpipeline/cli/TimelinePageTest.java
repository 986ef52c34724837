package dev.jpipeline.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.jpipeline.trace.StageOperation;
import dev.jpipeline.trace.TraceEvent;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.logging.Level;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.openqa.selenium.By;
import org.openqa.selenium.JavascriptExecutor;
import org.openqa.selenium.chrome.ChromeDriver;
import org.openqa.selenium.chrome.ChromeDriverService;
import org.openqa.selenium.chrome.ChromeOptions;
import org.openqa.selenium.interactions.Actions;
import org.openqa.selenium.logging.LogEntry;
import org.openqa.selenium.logging.LogType;
import org.openqa.selenium.logging.LoggingPreferences;
import org.openqa.selenium.support.ui.WebDriverWait;

/**
 * The timeline page is one self-contained file that escapes every name, and, in headless Chromium (driven by
 * Selenium through the system's chromedriver), draws its lanes without a console error, zooms, and shows a
 * span's details when the mouse hovers it.
 */
@Timeout(180)
class TimelinePageTest {

    private static final Path CHROMIUM = Path.of("/usr/bin/chromium");
    private static final Path CHROMEDRIVER = Path.of("/usr/bin/chromedriver");
    /** Names that would break out of HTML, a script, a JS string or an ECharts rich-text label. */
    private static final String PRODUCER = "prod</script><b class=\"injected\">x</b>'\"\\{a|b}\u0001\u2028";
    private static final String CONSUMER = "cons<img src=x onerror=\"window.injected=1\">&amp;\t\u007f";
    private static final long MS = 1_000_000;

    @TempDir
    static Path dir;
    private static ChromeDriver browser;

    @BeforeAll
    static void startBrowser() {
        if (!Files.isExecutable(CHROMIUM) || !Files.isExecutable(CHROMEDRIVER)) {
            return;
        }
        ChromeOptions options = new ChromeOptions();
        options.setBinary(CHROMIUM.toFile());
        options.addArguments("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
            "--window-size=1400,900", "--no-first-run", "--disable-background-networking",
            "--disable-component-update", "--disable-sync", "--user-data-dir=" + dir.resolve("profile"));
        LoggingPreferences logs = new LoggingPreferences();
        logs.enable(LogType.BROWSER, Level.ALL);
        options.setCapability("goog:loggingPrefs", logs);
        // the driver is given: Selenium Manager has nothing to look up or download
        ChromeDriverService service = new ChromeDriverService.Builder()
            .usingDriverExecutable(CHROMEDRIVER.toFile()).withTimeout(Duration.ofSeconds(60)).build();
        browser = new ChromeDriver(service, options);
        browser.manage().timeouts().pageLoadTimeout(Duration.ofSeconds(60)).scriptTimeout(Duration.ofSeconds(30));
    }

    @AfterAll
    static void stopBrowser() {
        if (browser != null) {
            browser.quit();
        }
    }

    /** A 300 ms run of 10 batches over 2 stages: 1 producer (and its copies of 2 MiB) and 1 consumer. */
    private static List<TraceEvent> run() {
        List<TraceEvent> events = new ArrayList<>();
        for (int b = 0; b < 10; b++) {
            long t = b * 30 * MS;
            int stage = b % 2;
            events.add(new TraceEvent(PRODUCER, 0, "producer", StageOperation.ACQUIRE, t, MS, stage, b));
            events.add(new TraceEvent(PRODUCER, 0, "producer", StageOperation.COPY, t + MS + 10_000, 2 * MS, stage, b));
            events.add(new TraceEvent(PRODUCER, 0, "producer", StageOperation.COMMIT, t + MS + 50_000, 0, stage, b));
            events.add(new TraceEvent(CONSUMER, 1, "consumer", StageOperation.WAIT, t + 500_000, 3 * MS, stage, b));
            // the consumer computes 80 µs: 0.3 px of a 1200 px chart of the whole run
            events.add(new TraceEvent(CONSUMER, 1, "consumer", StageOperation.RELEASE, t + 3_580_000, 0, stage, b));
        }
        events.sort((x, y) -> Long.compare(x.startNanos(), y.startNanos()));
        return events;
    }

    private static Path write(String name, String title) throws Exception {
        Path page = dir.resolve(name);
        TimelinePage.write(page, run(), 2, e -> 2 << 20, title);
        return page;
    }

    @Test
    void thePageIsOneFileAndEscapesEveryName() throws Exception {
        String html = Files.readString(write("escaped.html", PRODUCER));
        String own = html.substring(0, html.indexOf("<script>")) + html.substring(html.indexOf("</script>"));
        assertFalse(Pattern.compile("<(script|img|iframe)[^>]*\\bsrc\\s*=|<link|https?:", Pattern.CASE_INSENSITIVE)
            .matcher(own).find(), "nothing loaded from elsewhere");
        assertTrue(html.contains("Licensed to the Apache Software Foundation"), "ECharts' licence header");
        assertEquals(2, html.split("</script>", -1).length - 1, "only the page's own two scripts end");
        assertFalse(html.contains("<b class=\"injected\">") || html.contains("<img src=x"), "names escaped");
        assertTrue(html.contains("<h1>jpipeline timeline: prod&lt;/script&gt;&lt;b class=&quot;injected&quot;&gt;"));
        for (String name : List.of(PRODUCER, CONSUMER)) {
            assertEquals(name, new ObjectMapper().readValue(TimelinePage.json(name), String.class));
        }
    }

    @Test
    void copiesInFlightAtOnceAreStackedInRowsOfTheirOwn() throws Exception {
        List<TraceEvent> events = List.of(
            new TraceEvent("p", 0, "producer", StageOperation.ACQUIRE, 0, MS, 0, 0),
            new TraceEvent("p", 0, "producer", StageOperation.COPY, MS, 10 * MS, 0, 0),
            new TraceEvent("p", 0, "producer", StageOperation.COPY, 2 * MS, 10 * MS, 1, 1),
            new TraceEvent("p", 0, "producer", StageOperation.COPY, 3 * MS, 10 * MS, 2, 2),
            new TraceEvent("p", 0, "producer", StageOperation.COPY, 12 * MS, MS, 0, 3));
        Path page = dir.resolve("stacked.html");
        TimelinePage.write(page, events, 3, e -> 1, "stacked");
        Matcher m = Pattern.compile("const run = (\\{.*});").matcher(Files.readString(page));
        assertTrue(m.find());
        JsonNode run = new ObjectMapper().readTree(m.group(1));
        List<String> labels = new ArrayList<>();
        run.get("lanes").forEach(l -> labels.add(l.get("label").asText()));
        assertEquals(List.of("producer 0", "copies of producer 0", "copies of producer 0 #2",
            "copies of producer 0 #3"), labels, "three copies in flight at once: three rows");
        Map<Integer, List<double[]>> rows = new HashMap<>();
        for (JsonNode s : run.get("spans")) {
            if (s.get(1).asInt() == 4) {
                rows.computeIfAbsent(s.get(0).asInt(), r -> new ArrayList<>())
                    .add(new double[] {s.get(2).asDouble(), s.get(3).asDouble()});
            }
        }
        assertEquals(Set.of(1, 2, 3), rows.keySet());
        assertEquals(2, rows.get(1).size(), "the fourth copy starts after the first landed: its row again");
        rows.values().forEach(r -> {
            for (int i = 1; i < r.size(); i++) {
                assertTrue(r.get(i - 1)[1] <= r.get(i)[0], "copies of one row do not overlap");
            }
        });
    }

    @Test
    void theBrowserDrawsLanesZoomsAndShowsSpanDetails() throws Exception {
        Assumptions.assumeTrue(browser != null, "no " + CHROMIUM + " and " + CHROMEDRIVER
            + " on this machine (.ci/run installs Debian's chromium and chromium-driver): not rendered");
        JavascriptExecutor js = load(write("timeline.html", PRODUCER));
        assertEquals(List.of("producer 0", "copies of producer 0", "consumer 0"),
            js.executeScript("return timelineChart.getOption().yAxis[0].data"));
        assertEquals(List.of(PRODUCER, PRODUCER, CONSUMER), js.executeScript("return run.lanes.map(l => l.thread)"));
        assertEquals(List.of("waiting for a free stage", "waiting for data", "stage 0", "stage 1"),
            js.executeScript("return timelineChart.getOption().legend[0].data"));
        assertEquals("jpipeline timeline: " + PRODUCER.replaceAll("[\\x00-\\x1f]", "\ufffd"),
            js.executeScript("return document.querySelector('h1').textContent"));
        assertEquals(null, js.executeScript("return window.injected"));
        assertEquals(0L, js.executeScript("return document.querySelectorAll('.injected').length"));
        String summary = browser.findElement(By.id("summary")).getText();
        assertTrue(summary.contains("producers (1) waited") && summary.contains("consumers (1) waited")
            && summary.contains("20.0 MiB in 10 copies"), summary);

        // batch 7's computation, 80 µs, is drawn 2 px wide although it is narrower than a pixel
        String span = "const c = timelineChart, s = c.getOption().series.findIndex(x => x.name === 'stage 1');"
            + "const i = c.getOption().series[s].data.findIndex(v => v[3] === 3 && v[5] === 7);";
        assertTrue((Double) js.executeScript(span + "return c.convertToPixel({xAxisIndex: 0}, 0.08)"
            + " - c.convertToPixel({xAxisIndex: 0}, 0)") < 1, "the span is narrower than a pixel");
        assertTrue(((Number) js.executeScript(span + "const d = c.getModel().getSeriesByIndex(s).getData();"
            + "return d.getItemGraphicEl(d.indexOfRawIndex(i)).shape.width")).doubleValue() >= 2,
            "the span is drawn 2 px wide");

        // zoom to 213..215 ms, around batch 7's computation: 80 µs are then ~40 px
        js.executeScript("timelineChart.dispatchAction({type: 'dataZoom', startValue: 213, endValue: 215})");
        assertTrue(((Number) js.executeScript(span + "const d = c.getModel().getSeriesByIndex(s).getData();"
            + "return d.getItemGraphicEl(d.indexOfRawIndex(i)).shape.width")).doubleValue() > 20, "zoomed in");
        assertEquals(213.0, ((Number) js.executeScript("return timelineChart.getOption().dataZoom[0].startValue"))
            .doubleValue());

        // the mouse hovers the span's middle (offsets from the chart's centre) and the tooltip shows its details
        List<?> at = (List<?>) js.executeScript(span + "const v = c.getOption().series[s].data[i];"
            + "return c.convertToPixel({xAxisIndex: 0, yAxisIndex: 0}, [(v[0] + v[1]) / 2, v[2]])"
            + ".map((p, k) => Math.round(p - [c.getWidth(), c.getHeight()][k] / 2))");
        new Actions(browser).moveToElement(browser.findElement(By.id("chart")), ((Number) at.get(0)).intValue(),
            ((Number) at.get(1)).intValue()).perform();
        String tip = new WebDriverWait(browser, Duration.ofSeconds(10)).until(d -> {
            String text = (String) js.executeScript(
                "const t = document.querySelector('.timeline-tip'); return t ? t.innerText : ''");
            return text.contains("computing") ? text : null;
        });
        assertTrue(tip.contains("consumer 0") && tip.contains(CONSUMER.substring(0, 10)) && tip.contains("stage 1")
            && tip.contains("batch 7") && tip.contains("duration 80.0 µs"), tip);
        assertEquals(0L, js.executeScript("return document.querySelectorAll('.timeline-tip .injected, img').length"));
        assertNoConsoleErrors();
    }

    @Test
    void aStreamRunsPageLabelsItsLanesByRole() throws Exception {
        Assumptions.assumeTrue(browser != null, "no " + CHROMIUM + " and " + CHROMEDRIVER + ": not rendered");
        Path page = dir.resolve("stream.html");
        String[] out = Cli.run("stream", "--synthetic", "16m", "--chunk", "256k", "--stages", "3", "--producers", "2",
            "--consumers", "2", "--timeline", page.toString());
        assertEquals("0", out[0], out[2]);
        JavascriptExecutor js = load(page);
        assertEquals(List.of("producer 0", "copies of producer 0", "producer 1", "copies of producer 1",
            "consumer 0", "consumer 1"), js.executeScript("return timelineChart.getOption().yAxis[0].data"
                + ".filter(l => !/ #\\d+$/.test(l))"), "more rows where copies were in flight at once");
        String summary = browser.findElement(By.id("summary")).getText();
        assertTrue(summary.contains("producers (2) waited") && summary.contains("16.0 MiB in 128 copies"), summary);
        assertNoConsoleErrors();
    }

    @Test
    void anEmptyTraceGivesAnEmptyChart() throws Exception {
        Assumptions.assumeTrue(browser != null, "no " + CHROMIUM + " and " + CHROMEDRIVER + ": not rendered");
        Path page = dir.resolve("empty.html");
        TimelinePage.write(page, List.of(), 4, e -> 0, "nothing");
        JavascriptExecutor js = load(page);
        assertEquals(List.of(), js.executeScript("return timelineChart.getOption().yAxis[0].data"));
        assertNoConsoleErrors();
    }

    private static JavascriptExecutor load(Path page) {
        browser.manage().logs().get(LogType.BROWSER); // drops the previous page's entries
        browser.get(page.toUri().toString());
        new WebDriverWait(browser, Duration.ofSeconds(30))
            .until(d -> ((JavascriptExecutor) d).executeScript("return !!window.timelineChart"));
        return browser;
    }

    private static void assertNoConsoleErrors() {
        List<String> severe = browser.manage().logs().get(LogType.BROWSER).getAll().stream()
            .filter(e -> e.getLevel().intValue() >= Level.SEVERE.intValue()).map(LogEntry::getMessage).toList();
        assertEquals(List.of(), severe, "console errors");
    }
}
