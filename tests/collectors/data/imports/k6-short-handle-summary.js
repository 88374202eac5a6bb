import http from "k6/http";

export const options = {
  vus: 2,
  iterations: 6,
};

export default function () {
  http.get("http://127.0.0.1:18125/sleep/2");
}

export function handleSummary(data) {
  return { "k6-short-handle-summary.json": JSON.stringify(data) };
}
