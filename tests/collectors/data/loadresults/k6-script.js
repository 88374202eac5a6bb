import http from "k6/http";

export const options = {
  vus: 5,
  duration: "3s",
};

export default function () {
  http.get("http://127.0.0.1:18080/mixed");
}
