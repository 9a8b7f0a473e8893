// What a camera's screen says when its address names no camera the gateway has (a removed one, a
// mistyped link).
export function CameraNotFound() {
  return (
    <section>
      <h1>Camera not found</h1>
      <p>
        The gateway has no camera with this address. <a href="/">Back to the cameras</a>.
      </p>
    </section>
  );
}
