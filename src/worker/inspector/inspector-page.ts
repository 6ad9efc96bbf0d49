/**
 * The inspector page: plain HTML and CSS, no framework, no build step, nothing fetched
 * from elsewhere (it works offline). Its script is `inspector/app.js` (inspector-script.ts).
 */
export const INSPECTOR_HTML = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Edgelink inspector</title>
<style>
  :root { color-scheme: light dark; --line: #8884; --muted: #888; --accent: #2563eb; }
  * { box-sizing: border-box; }
  body { margin: 0; font: 14px/1.45 system-ui, sans-serif; }
  header { display: flex; gap: 1rem; align-items: center; padding: .5rem 1rem; border-bottom: 1px solid var(--line); flex-wrap: wrap; }
  header h1 { font-size: 1.1rem; margin: 0; }
  main { display: grid; grid-template-columns: minmax(320px, 1fr) minmax(320px, 1fr); gap: 1rem; padding: 1rem; }
  section { border: 1px solid var(--line); border-radius: 6px; padding: .75rem; min-width: 0; }
  h2 { font-size: 1rem; margin: 0 0 .5rem; }
  h3 { font-size: .9rem; margin: .75rem 0 .25rem; }
  button { font: inherit; padding: .3rem .7rem; border-radius: 4px; border: 1px solid var(--line); cursor: pointer; }
  button.primary { background: var(--accent); color: white; border-color: var(--accent); }
  button:focus-visible, input:focus-visible, textarea:focus-visible, select:focus-visible { outline: 2px solid var(--accent); outline-offset: 1px; }
  input, textarea, select { font: inherit; padding: .3rem; border: 1px solid var(--line); border-radius: 4px; width: 100%; }
  label { display: block; font-weight: 600; margin-bottom: .2rem; }
  .row { display: flex; gap: .5rem; align-items: end; }
  .row > :first-child { flex: 1; }
  .muted { color: var(--muted); }
  .log { max-height: 50vh; overflow: auto; display: flex; flex-direction: column; gap: .4rem; margin-bottom: .5rem; }
  .bubble { padding: .4rem .6rem; border-radius: 6px; border: 1px solid var(--line); white-space: pre-wrap; overflow-wrap: anywhere; }
  .bubble.user { align-self: flex-end; background: #2563eb22; }
  .bubble.tool { font-family: ui-monospace, monospace; font-size: 12px; }
  .bubble.thinking { font-style: italic; color: var(--muted); }
  label.inline { display: flex; gap: .3rem; font-weight: normal; margin: 0; }
  label.inline input { width: auto; }
  #auth-scheme { flex: none; width: auto; }
  [hidden] { display: none !important; }
  .state { display: inline-block; padding: 0 .4rem; border-radius: 3px; font-size: 12px; border: 1px solid var(--line); }
  .state.TASK_STATE_COMPLETED { background: #16a34a33; } .state.TASK_STATE_FAILED, .state.TASK_STATE_REJECTED { background: #dc262633; } .state.TASK_STATE_CANCELED { background: #8883; }
  .state.TASK_STATE_WORKING, .state.TASK_STATE_SUBMITTED { background: #eab30833; } .state.TASK_STATE_INPUT_REQUIRED, .state.TASK_STATE_AUTH_REQUIRED { background: #2563eb33; }
  table { border-collapse: collapse; width: 100%; font-size: 13px; }
  th, td { text-align: left; padding: .2rem .3rem; border-bottom: 1px solid var(--line); }
  td button { padding: 0 .3rem; font-family: ui-monospace, monospace; font-size: 12px; }
  code { overflow-wrap: anywhere; }
  pre { white-space: pre-wrap; overflow-wrap: anywhere; font-size: 12px; margin: 0; }
  ol { padding-left: 3em; }
  ol.timeline li { white-space: pre-wrap; overflow-wrap: anywhere; }
  ol.timeline { font-size: 13px; max-height: 40vh; overflow: auto; }
  .error { color: #dc2626; }
  .waterfall { font-size: 12px; display: grid; gap: 2px; }
  .step { display: grid; grid-template-columns: 12rem 1fr 11rem; gap: .4rem; align-items: center; }
  .step .what { overflow: hidden; text-overflow: ellipsis; white-space: nowrap; }
  .track { position: relative; height: .8rem; background: #8881; }
  .bar { position: absolute; top: 0; bottom: 0; min-width: 2px; background: var(--accent); }
  .step.tool .bar { background: #16a34a; } .step.delegation .bar { background: #9333ea; } .step.push .bar { background: #eab308; } .bar.bad { background: #dc2626; }
  .held { border: 1px solid var(--accent); border-radius: 6px; padding: .5rem; margin: .5rem 0; display: grid; gap: .3rem; }
  .held p { margin: 0; } .held details { display: grid; gap: .3rem; } .held .choices { flex-wrap: wrap; } .held .choices > * { flex: none; }
  @media (max-width: 800px) { main { grid-template-columns: 1fr; } }
</style>
</head>
<body>
<header>
  <h1>Edgelink inspector</h1>
  <span id="agent-name" class="muted"></span>
  <form id="auth-form" class="row" style="margin-left:auto; min-width: 320px" hidden>
    <div><label for="credential">Credential</label>
    <div class="row"><select id="auth-scheme" aria-label="Credential kind"></select>
    <input id="credential" type="password" autocomplete="off" placeholder="kept in this tab only"></div></div>
    <button type="submit">Use</button>
  </form>
</header>
<main>
  <section aria-labelledby="chat-title">
    <h2 id="chat-title">Chat</h2>
    <div id="chat-log" class="log" role="log" aria-live="polite" aria-label="Conversation"></div>
    <p id="chat-status" class="muted" role="status" aria-live="polite"></p>
    <form id="chat-form">
      <label for="chat-input">Message</label>
      <textarea id="chat-input" rows="3" placeholder="Enter sends, Shift+Enter for a new line"></textarea>
      <div class="row" style="margin-top:.4rem">
        <span class="muted" id="chat-context">New conversation</span>
        <label class="inline"><input type="checkbox" id="as-json"> Parts as JSON</label>
        <button type="button" id="new-chat">New conversation</button>
        <button type="button" id="cancel" disabled>Cancel task</button>
        <button type="submit" class="primary" id="send">Send</button>
      </div>
    </form>
  </section>
  <section aria-labelledby="card-title">
    <h2 id="card-title">Agent card</h2>
    <div id="card"><p class="muted">Loading…</p></div>
  </section>
  <section aria-labelledby="tasks-title">
    <h2 id="tasks-title">Tasks</h2>
    <div class="row"><span class="muted" id="tasks-note"></span><button type="button" id="refresh-tasks">Refresh</button></div>
    <table><caption class="muted" style="text-align:left">Newest first; choose a task to inspect it</caption>
      <thead><tr><th scope="col">Task</th><th scope="col">State</th><th scope="col">Updated</th></tr></thead>
      <tbody id="tasks"></tbody></table>
  </section>
  <section aria-labelledby="task-title">
    <h2 id="task-title">Task</h2>
    <div id="task"><p class="muted">No task chosen.</p></div>
  </section>
  <section aria-labelledby="history-title">
    <h2 id="history-title">Conversation history</h2>
    <div class="row">
      <div><label for="keep">Messages to keep when compacting</label><input id="keep" type="number" min="1" max="1000" value="4"></div>
      <button type="button" id="compact">Compact</button>
    </div>
    <p id="history-note" class="muted" role="status" aria-live="polite"></p>
    <ol id="history" class="timeline"></ol>
  </section>
  <section aria-labelledby="push-title">
    <h2 id="push-title">Push deliveries</h2>
    <div id="push"><p class="muted">Choose a task to see its webhooks and dead letters.</p></div>
  </section>
</main>
<script src="inspector/app.js"></script>
<script src="inspector/memory.js"></script>
</body>
</html>
`;
